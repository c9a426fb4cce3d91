#include "report/makespan_stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "util/check.hpp"

namespace splitscope {

double MakespanStats::spread() const {
  if (median_ms <= 0) return 0;
  return std::max(max_ms - median_ms, median_ms - min_ms) / median_ms;
}

MakespanStats makespan_stats(const std::vector<Timeline>& timelines) {
  SPLITSCOPE_CHECK(!timelines.empty(), "makespan statistics need at least one timed repeat");
  std::vector<double> ms;
  ms.reserve(timelines.size());
  for (const Timeline& timeline : timelines) ms.push_back(timeline.makespan_us() / 1000.0);

  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  MakespanStats stats;
  stats.repeats = static_cast<int>(n);
  stats.min_ms = sorted.front();
  stats.max_ms = sorted.back();
  stats.median_ms = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  const auto rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(n)));
  stats.p95_ms = sorted[std::max<size_t>(rank, 1) - 1];
  stats.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);

  double best = std::fabs(ms[0] - stats.median_ms);
  for (size_t i = 1; i < n; ++i) {
    const double distance = std::fabs(ms[i] - stats.median_ms);
    if (distance < best) {
      best = distance;
      stats.representative = static_cast<int>(i);
    }
  }
  stats.representative_ms = ms[static_cast<size_t>(stats.representative)];
  stats.repeat_ms = std::move(ms);
  return stats;
}

}  // namespace splitscope
