#include "report/extrapolation_warning.hpp"

#include <fmt/format.h>

#include <vector>

#include "util/strings.hpp"

namespace splitscope {

std::optional<std::string> extrapolation_warning(const Comparison& comparison) {
  std::vector<std::string> runs;
  std::string machine;
  std::string model;
  for (const RunReport* run : comparison.all_runs()) {
    const RunSummary& summary = run->summary;
    if (summary.info.measured || !mostly_extrapolated(summary.info.calibrated_share)) continue;
    runs.push_back(fmt::format("{:.0f}% of {}", *summary.info.calibrated_share * 100, summary.strategy));
    machine = summary.info.machine_name;
    model = summary.model;
  }
  if (runs.empty()) return std::nullopt;
  return fmt::format(
      "warning: only {} of the predicted compute time came from {}'s measured op times; the rest is priced from the "
      "ops' shapes (a cpu machine's timed sgemm rates and kernel passes where it has them, else efficiencies fitted "
      "on the calibrated shapes, which can be several times off for other shapes: docs/cost-model.md). Calibrate "
      "on this network to predict it from measurements (calibrate --networks {},...)",
      join(runs, ", "), machine, model);
}

}  // namespace splitscope
