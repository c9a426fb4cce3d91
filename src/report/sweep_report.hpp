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

struct SweepPoint {
  /// (option, value) for every swept option, in the sweep's order.
  std::vector<std::pair<std::string, std::string>> values;
  bool fits = true;           ///< false: the plan does not fit its devices' memory (no times)
  double makespan_ms = 0;     ///< the median step (or forward pass)
  double samples_per_s = 0;   ///< samples a second: the batch over the makespan
  std::optional<double> speedup;  ///< against `single`, as the run reported it (none where single does not fit)
  std::string verdict;
};

struct Sweep {
  std::vector<std::string> run_arguments;  ///< the `run` command line swept, without the swept options
  std::vector<std::string> over;           ///< the swept options, the first one along the x axis
  std::vector<SweepPoint> points;          ///< in sweep order: the first option varies fastest
};

/// Points of one series: those that share every swept value but the first
/// option's, in sweep order (indices into Sweep::points).
std::vector<std::vector<size_t>> sweep_series(const Sweep& sweep);

/// Each point's throughput over its series' first point that fits (nullopt
/// where the point does not fit, or none of its series does).
std::vector<std::optional<double>> sweep_scaling(const Sweep& sweep);

/// Per series: where the throughput peaks, and what comes after the peak
/// ("rises to the last value", "devices 32 and 64 are slower").
std::vector<std::string> sweep_findings(const Sweep& sweep);

std::string sweep_text(const Sweep& sweep);
nlohmann::ordered_json sweep_json(const Sweep& sweep);
/// A self-contained page: the table and the throughput curve of every series.
std::string sweep_html(const Sweep& sweep);

}  // namespace splitscope
