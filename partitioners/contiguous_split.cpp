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

  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  // best[k][i]: smallest bottleneck of the first i items in k parts;
  // cut[k][i]: where the last of those k parts starts.
  std::vector<std::vector<double>> best(parts + 1, std::vector<double>(n + 1, kInfinity));
  std::vector<std::vector<size_t>> cut(parts + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0.0;
  for (size_t k = 1; k <= parts; ++k) {
    for (size_t i = k; i <= n - (parts - k); ++i) {
      for (size_t j = k - 1; j < i; ++j) {
        const double candidate = std::max(best[k - 1][j], sum(j, i));
        if (candidate < best[k][i]) {
          best[k][i] = candidate;
          cut[k][i] = j;
        }
      }
    }
  }
  std::vector<size_t> starts(parts);
  size_t end = n;
  for (size_t k = parts; k >= 1; --k) {
    starts[k - 1] = cut[k][end];
    end = cut[k][end];
  }
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
