#include "partitioners/contiguous_split.hpp"

#include <algorithm>
#include <limits>

#include "util/check.hpp"

namespace splitscope {

std::vector<size_t> balanced_contiguous_split(const std::vector<double>& costs, size_t parts) {
  const size_t n = costs.size();
  SPLITSCOPE_CHECK(parts >= 1 && parts <= n, "cannot split into that many non-empty parts");
  std::vector<double> prefix(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + costs[i];
  auto sum = [&](size_t from, size_t to) { return prefix[to] - prefix[from]; };
  // The first j in [low, high) with test(j), or high: test must turn true once and stay so.
  auto first = [](size_t low, size_t high, auto test) {
    while (low < high) {
      const size_t middle = low + (high - low) / 2;
      if (test(middle)) {
        high = middle;
      } else {
        low = middle + 1;
      }
    }
    return low;
  };

  // best[i]: smallest bottleneck of the first i items in k parts, one row per k.
  // The last part of the best split of i items starts at some j: best_k-1[j] grows
  // with j and sum(j, i) shrinks, so the optimum sits where they cross, found by
  // binary search: O(parts · n · log n) time, O(n) memory.
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  std::vector<double> previous(n + 1, kInfinity);
  std::vector<double> current(n + 1, kInfinity);
  previous[0] = 0.0;
  for (size_t k = 1; k <= parts; ++k) {
    std::fill(current.begin(), current.end(), kInfinity);
    for (size_t i = k; i <= n - (parts - k); ++i) {
      const size_t cross = first(k - 1, i, [&](size_t j) { return previous[j] >= sum(j, i); });
      for (size_t j : {cross, cross - 1}) {
        if (j >= k - 1 && j < i) current[i] = std::min(current[i], std::max(previous[j], sum(j, i)));
      }
    }
    std::swap(previous, current);
  }
  const double best = previous[n];

  // The cuts, from the back: each part starts as early as the bottleneck allows,
  // which gives the earliest cuts among the equally good splits.
  std::vector<size_t> starts(parts);
  size_t end = n;
  for (size_t k = parts; k >= 2; --k) {
    starts[k - 1] = first(k - 1, end, [&](size_t j) { return sum(j, end) <= best; });
    end = starts[k - 1];
  }
  starts[0] = 0;
  SPLITSCOPE_CHECK(sum(0, end) <= best, "the first part exceeds the optimal bottleneck");
  return starts;
}

double bottleneck(const std::vector<double>& costs, const std::vector<size_t>& starts) {
  double worst = 0.0;
  for (size_t part = 0; part < starts.size(); ++part) {
    const size_t end = part + 1 < starts.size() ? starts[part + 1] : costs.size();
    double total = 0.0;
    for (size_t i = starts[part]; i < end; ++i) total += costs[i];
    worst = std::max(worst, total);
  }
  return worst;
}

}  // namespace splitscope
