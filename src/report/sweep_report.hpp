#pragma once
/// \file
/// `splitscope sweep`'s results and how they are shown: a table per point
/// (each swept option's value, makespan, throughput, scaling against the
/// first value, the run's own speedup and verdict), where each series peaks,
/// the JSON document (schema splitscope.sweep/1) and an HTML page with the
/// throughput curve. Knows nothing of how the points were run.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace splitscope {

struct OptionSweepPoint {
  /// (option, value) for every swept option, in the sweep's order.
  std::vector<std::pair<std::string, std::string>> values;
  bool fits = true;           ///< false: the plan does not fit its devices' memory (no times)
  double makespan_ms = 0;     ///< the median step (or forward pass)
  double samples_per_s = 0;   ///< samples a second: the batch over the makespan
  std::optional<double> speedup;  ///< against `single`, as the run reported it (none where single does not fit)
  std::string verdict;
  /// Parameter-server training runs: the loss against wall time, (ms, loss) at each step window's end.
  std::vector<std::pair<double, double>> loss_curve;
};

struct OptionSweep {
  std::vector<std::string> run_arguments;  ///< the `run` command line swept, without the swept options
  std::vector<std::string> over;           ///< the swept options, the first one along the x axis
  std::vector<OptionSweepPoint> points;          ///< in sweep order: the first option varies fastest
};

/// Points of one series: those that share every swept value but the first
/// option's, in sweep order (indices into OptionSweep::points).
std::vector<std::vector<size_t>> option_sweep_series(const OptionSweep& sweep);

/// Each point's throughput over its series' first point that fits (nullopt
/// where the point does not fit, or none of its series does).
std::vector<std::optional<double>> option_sweep_scaling(const OptionSweep& sweep);

/// Per series: where the throughput peaks, and what comes after the peak
/// ("rises to the last value", "devices 32 and 64 are slower").
std::vector<std::string> option_sweep_findings(const OptionSweep& sweep);

std::string option_sweep_text(const OptionSweep& sweep);
nlohmann::ordered_json option_sweep_json(const OptionSweep& sweep);
/// A self-contained page: the table and the throughput curve of every series.
std::string option_sweep_html(const OptionSweep& sweep);

}  // namespace splitscope
