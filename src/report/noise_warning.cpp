#include "report/noise_warning.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "report/speedup_interval.hpp"

namespace splitscope {
namespace {

/// Sample standard deviation over mean.
double relative_deviation(const std::vector<double>& values) {
  const double n = static_cast<double>(values.size());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  if (mean <= 0) return 0;
  double squares = 0;
  for (double value : values) squares += (value - mean) * (value - mean);
  return std::sqrt(squares / (n - 1)) / mean;
}

}  // namespace

std::optional<std::string> noise_warning(const Comparison& comparison) {
  std::vector<RepeatTimes> runs;
  for (const RunReport* run : comparison.all_runs()) {
    const RunSummary& summary = run->summary;
    if (!summary.info.measured || !summary.timed()) continue;
    runs.push_back({summary.strategy, summary.makespan->repeat_ms});
  }
  return noise_warning(runs,
                       "small speedups may be noise; close other programs, or raise --repeat (verdicts whose "
                       "interval straddles a threshold say 'uncertain')");
}

std::optional<std::string> noise_warning(const std::vector<RepeatTimes>& runs, const std::string& advice) {
  std::vector<std::pair<double, std::string>> unstable;
  for (const RepeatTimes& run : runs) {
    if (run.repeat_ms.size() < static_cast<size_t>(kMinRepeatsForInterval)) continue;
    const double deviation = relative_deviation(run.repeat_ms);
    if (deviation > kUnstableSpread) unstable.emplace_back(deviation, run.name);
  }
  if (unstable.empty()) return std::nullopt;
  std::stable_sort(unstable.begin(), unstable.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string names;
  for (const auto& [deviation, name] : unstable) {
    names += fmt::format("{}{} ({:.0f}%)", names.empty() ? "" : ", ", name, deviation * 100);
  }
  return fmt::format(
      "warning: the repeats of {} varied by more than {:.0f}% of their mean (standard deviation), so this "
      "machine looks busy and {}",
      names, kUnstableSpread * 100, advice);
}

}  // namespace splitscope
