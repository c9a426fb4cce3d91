#include "partitioners/contiguous_split.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

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

  // The smallest bottleneck is the smallest B for which the greedy split (each
  // part as long as B allows) needs at most `parts` parts; with costs >= 0,
  // splitting further never raises a part, so that is also the best split into
  // exactly `parts` non-empty parts. Feasibility changes only at the sums
  // sum(j, i) themselves, and the greedy compares those very sums with B, so
  // bisecting over the doubles themselves (their bit patterns are ordered
  // like their values when >= 0) ends exactly on the optimum.
  // O(64 · parts · log n) time: independent of n·parts, which made 10,000
  // devices over 200,000 layers take a minute with the dynamic programme.
  const auto fits = [&](double limit) {
    size_t start = 0;
    for (size_t part = 0; part < parts && start < n; ++part) {
      start = first(start + 1, n + 1, [&](size_t end) { return sum(start, end) > limit; }) - 1;
      if (start < n && sum(start, start + 1) > limit) return false;  // one item alone is past the limit
    }
    return start == n;
  };
  const auto bits = [](double value) { return std::bit_cast<uint64_t>(value); };
  uint64_t low = bits(0.0);
  uint64_t high = bits(sum(0, n));  // one part takes everything: always feasible
  while (low < high) {
    const uint64_t middle = low + (high - low) / 2;
    if (fits(std::bit_cast<double>(middle))) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  const double best = std::bit_cast<double>(low);

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
