#include "search/stage_cut_search.hpp"

#include <algorithm>
#include <limits>

#include "util/check.hpp"

namespace splitscope {
namespace {

/// Prefix sums of the unit times, so a stage's compute is one subtraction.
std::vector<double> prefix_seconds(const StageCosts& costs) {
  std::vector<double> prefix(costs.unit_seconds.size() + 1, 0.0);
  for (size_t i = 0; i < costs.unit_seconds.size(); ++i) prefix[i + 1] = prefix[i] + costs.unit_seconds[i];
  return prefix;
}

double edge_seconds(const StageCosts& costs, size_t first, size_t end, double bytes_per_second) {
  double bytes = 0;
  if (first > 0) bytes += costs.cut_bytes_per_row[first - 1];
  if (end < costs.unit_seconds.size()) bytes += costs.cut_bytes_per_row[end - 1];
  return bytes * static_cast<double>(costs.rows) / bytes_per_second;
}

}  // namespace

double stage_seconds(const StageCosts& costs, size_t first, size_t end, double bytes_per_second) {
  double compute = 0;
  for (size_t i = first; i < end; ++i) compute += costs.unit_seconds[i];
  return compute + edge_seconds(costs, first, end, bytes_per_second);
}

std::vector<int> best_stage_cuts(const StageCosts& costs, int stages, double bytes_per_second) {
  const size_t n = costs.unit_seconds.size();
  const auto k = static_cast<size_t>(stages);
  SPLITSCOPE_CHECK(k >= 1 && k <= n, "cannot cut into that many non-empty stages");
  const std::vector<double> prefix = prefix_seconds(costs);
  const auto stage = [&](size_t first, size_t end) {
    return prefix[end] - prefix[first] + edge_seconds(costs, first, end, bytes_per_second);
  };
  constexpr double kNever = std::numeric_limits<double>::infinity();
  // best[s][j]: the slowest stage of the best cut of units [0, j) into s stages;
  // from[s][j]: where its last stage starts.
  std::vector<std::vector<double>> best(k + 1, std::vector<double>(n + 1, kNever));
  std::vector<std::vector<size_t>> from(k + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (size_t s = 1; s <= k; ++s) {
    // s stages cover at least s units, and leave at least k - s for the rest.
    for (size_t j = s; j + (k - s) <= n; ++j) {
      for (size_t i = s - 1; i < j; ++i) {
        if (best[s - 1][i] == kNever) continue;
        const double slowest = std::max(best[s - 1][i], stage(i, j));
        if (slowest < best[s][j]) {
          best[s][j] = slowest;
          from[s][j] = i;
        }
      }
    }
  }
  std::vector<int> starts(k);
  size_t end = n;
  for (size_t s = k; s >= 1; --s) {
    starts[s - 1] = static_cast<int>(from[s][end]);
    end = from[s][end];
  }
  return starts;
}

double slowest_stage_seconds(const StageCosts& costs, const std::vector<int>& starts, double bytes_per_second) {
  double slowest = 0;
  for (size_t s = 0; s < starts.size(); ++s) {
    const size_t end = s + 1 < starts.size() ? static_cast<size_t>(starts[s + 1]) : costs.unit_seconds.size();
    slowest = std::max(slowest, stage_seconds(costs, static_cast<size_t>(starts[s]), end, bytes_per_second));
  }
  return slowest;
}

}  // namespace splitscope
