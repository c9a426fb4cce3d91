#include "report/model_error_interval.hpp"

#include <algorithm>

namespace splitscope {

std::optional<double> shared_model_error(const RunSummary& run, const RunSummary& baseline) {
  if (!run.timed() || !baseline.timed() || !run.info.model_error || !baseline.info.model_error) return std::nullopt;
  return std::max(run.info.model_error->relative, baseline.info.model_error->relative);
}

std::optional<SpeedupInterval> model_error_interval(const RunSummary& run, const RunSummary& baseline) {
  const std::optional<double> error = shared_model_error(run, baseline);
  if (!error) return std::nullopt;
  const double e = *error;
  const auto speedup = [&](double epsilon) {
    return (baseline.makespan->median_ms + epsilon * baseline.critical_path.compute_ms) /
           (run.makespan->median_ms + epsilon * run.critical_path.compute_ms);
  };
  const double slow = speedup(-e);
  const double fast = speedup(e);
  return SpeedupInterval{std::min(slow, fast), std::max(slow, fast)};
}

}  // namespace splitscope
