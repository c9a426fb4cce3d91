// The balanced layer split equals the brute-force optimum.

#include <gtest/gtest.h>

#include <random>

#include "partitioners/contiguous_split.hpp"

namespace splitscope {
namespace contiguous_split_test {
namespace {

/// Smallest bottleneck over every way to cut `costs` into `parts` non-empty parts.
double brute_force(const std::vector<double>& costs, size_t parts, size_t from = 0) {
  if (parts == 1) {
    double total = 0;
    for (size_t i = from; i < costs.size(); ++i) total += costs[i];
    return total;
  }
  double best = 1e300;
  double first = 0;
  for (size_t end = from + 1; end + parts - 1 <= costs.size(); ++end) {
    first += costs[end - 1];
    best = std::min(best, std::max(first, brute_force(costs, parts - 1, end)));
  }
  return best;
}

TEST(ContiguousSplit, MatchesBruteForceOnRandomCosts) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> cost(0.1, 10.0);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + rng() % 9;
    std::vector<double> costs(n);
    for (double& c : costs) c = cost(rng);
    for (size_t parts = 1; parts <= n; ++parts) {
      const auto starts = balanced_contiguous_split(costs, parts);
      ASSERT_EQ(starts.size(), parts);
      EXPECT_EQ(starts[0], 0u);
      for (size_t p = 1; p < parts; ++p) EXPECT_LT(starts[p - 1], starts[p]);  // non-empty parts
      EXPECT_DOUBLE_EQ(bottleneck(costs, starts), brute_force(costs, parts));
    }
  }
}

TEST(ContiguousSplit, MatchesBruteForceWithFreeItemsAndTies) {
  // Zero costs (flatten, activations) make plateaus where several cuts are equally good.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + rng() % 10;
    std::vector<double> costs(n);
    for (double& c : costs) c = static_cast<double>(rng() % 3);  // 0, 1 or 2
    for (size_t parts = 1; parts <= n; ++parts) {
      const auto starts = balanced_contiguous_split(costs, parts);
      for (size_t p = 1; p < parts; ++p) ASSERT_LT(starts[p - 1], starts[p]);
      EXPECT_DOUBLE_EQ(bottleneck(costs, starts), brute_force(costs, parts));
    }
  }
}

TEST(ContiguousSplit, AmongEqualSplitsTheEarliestCuts) {
  // {2} {0, 0, 2}, {2, 0} {0, 2} and {2, 0, 0} {2} all have bottleneck 2.
  EXPECT_EQ(balanced_contiguous_split({2, 0, 0, 2}, 2), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(balanced_contiguous_split({0, 0, 0, 0}, 3), (std::vector<size_t>{0, 1, 2}));
}

TEST(ContiguousSplit, DominantItemStandsAlone) {
  const std::vector<double> costs{1, 1, 20, 1, 1, 1};
  const auto starts = balanced_contiguous_split(costs, 3);
  // Best bottleneck is 20: the dominant item alone, the rest on either side.
  EXPECT_EQ(starts, (std::vector<size_t>{0, 2, 3}));
  EXPECT_DOUBLE_EQ(bottleneck(costs, starts), 20.0);
}

TEST(ContiguousSplit, GreedyWouldBeWorse) {
  // A greedy fill to the average (total 12 / 2 = 6) takes {5} then {1, 1, 5}:
  // bottleneck 7; the best split {5, 1} {1, 5} has 6.
  const std::vector<double> costs{5, 1, 1, 5};
  EXPECT_DOUBLE_EQ(bottleneck(costs, balanced_contiguous_split(costs, 2)), 6.0);
}

}  // namespace
}  // namespace contiguous_split_test
}  // namespace splitscope
