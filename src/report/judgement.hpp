#pragma once
/// \file
/// Speedup against the single-device baseline, a verdict, and a one-sentence
/// reason that names what decided it, with the number that shows it.
///
/// Verdict: speedup = baseline median / this median; `wins` at ≥ 1.05,
/// `loses` at ≤ 0.95, `even` between; `uncertain` when the speedup's 95%
/// interval (speedup_interval.hpp; measured runs of 3 or more repeats each)
/// holds speedups on both sides of one of those thresholds.
///
/// Reason: the rules, in order (the first that applies gives the sentence):
/// 1. This run does not fit in memory: `loses`, "does not fit: <device, bytes>".
/// 2. No baseline: no verdict, "no single-device baseline to compare with".
/// 3. The baseline does not fit but this run does: `wins`, "the model does not
///    fit on one device (...); split over N devices it does".
/// 4. This run is the `single` baseline itself: `even`, "the single-device baseline".
/// 5. Otherwise the run's device time (devices × makespan) is split three
///    ways, each a loss against the ideal of N devices sharing the baseline's
///    compute: compute inflation ((Σ compute - baseline compute) / device
///    time: sliced ops running slower in total), exposed transfer (devices
///    only moving data) and idle. The largest loss is what decided a `loses`
///    or an `even`:
///    - transfer: "transfers are 64% of the critical path (...)";
///    - idle, by its cause: a device holding ≥ 1.25/N of the FLOPs ("device 2
///      holds 71% of the FLOPs and the others wait for it"); a pipeline ("devices
///      idle 43% in the pipeline bubble (ideal 27% ...)"); a device with
///      ≥ 1.25/N of the compute time; else "devices idle 75% of the run
///      waiting on each other's results";
///    - inflation: "the split ops take 1.8× the single device's compute time".
///    `even` prefixes "spreading the work over N devices only breaks even: ".
///    A `wins` names how the work spread: "the work spreads over N devices
///    (the busiest holds 26% of the FLOPs) and transfers are only 3% of the
///    critical path" (at 25% or more: "; transfers still take 46% of ...") —
///    unless the work did not spread (a device holds >= 1.25/N of the FLOPs)
///    and the split's ops simply computed faster in total (at most 1/1.05 of
///    the single device's compute time): "its ops compute faster than on the
///    single device (0.62x the compute time: ...), though device 0 holds 93%
///    of the FLOPs".
/// 6. A measured run whose interval straddles a threshold: `uncertain`, "the
///    speedup's 95% interval, 0.91x to 1.12x over 3 and 3 repeats, straddles
///    the 1.05x win threshold, ...; <rule 5's sentence>".
/// 7. A simulated run whose speedup, within the model's own error
///    (model_error_interval.hpp), straddles a threshold: `uncertain`, "within
///    the model's error (its ops typically 8% off, alike in both runs) the
///    speedup could be 0.97x to 1.07x, across the 1.05x win threshold; <rule
///    5's sentence>".

#include <optional>
#include <string>
#include <string_view>

#include "report/run_summary.hpp"
#include "report/speedup_interval.hpp"

namespace splitscope {

enum class Verdict { kWins, kLoses, kEven, kUncertain };
std::string_view to_string(Verdict verdict);

inline constexpr double kWinSpeedup = 1.05;   ///< at or above: wins
inline constexpr double kLoseSpeedup = 0.95;  ///< at or below: loses
/// A device is overloaded when its share is at least this many times 1/N.
inline constexpr double kImbalanceFactor = 1.25;
/// Below this share of the critical path, a win calls transfers minor ("only").
inline constexpr double kMinorShare = 0.25;

/// wins / loses / even for a speedup.
Verdict verdict_for(double speedup);

/// Whether a speedup interval holds speedups of two verdicts (rule 6).
bool straddles_a_threshold(const SpeedupInterval& interval);

/// What decided the verdict; a stable key beside the sentence.
enum class Decider {
  kDoesNotFit,        ///< this run needs more memory than a device has
  kNoBaseline,
  kBaselineDoesNotFit,
  kIsBaseline,
  kTransfers,         ///< exposed transfer is the largest loss
  kImbalance,         ///< idle is, and one device holds too much of the work
  kPipelineBubble,    ///< idle is, in a pipeline
  kWaiting,           ///< idle is, devices waiting on each other (a layer split)
  kComputeInflation,  ///< sliced ops compute slower in total
  kSpread,            ///< a win: the work spread over the devices
  kFasterOps,         ///< a win without spreading: the split's ops computed faster in total
  kUncertain,         ///< the speedup's interval straddles a verdict threshold
  kModelError,        ///< simulated: the speedup within the model's own error straddles one
};
std::string_view to_string(Decider decider);

/// The loss terms of rule 5, as shares of this run's device time.
struct Losses {
  double compute_inflation = 0;
  double exposed_transfer = 0;
  double idle = 0;
};

struct Judgement {
  /// The run it was judged against: `single`, or in a training comparison
  /// `data` where data parallelism beat it.
  std::optional<std::string> baseline_strategy;
  std::optional<double> baseline_makespan_ms;
  std::optional<double> speedup;
  std::optional<Verdict> verdict;  ///< absent without a baseline
  Decider decider = Decider::kNoBaseline;
  std::string reason;              ///< one sentence, lower case, no final period
  std::optional<Losses> losses;    ///< when both runs were timed
  /// The speedup's 95% interval, for measured runs of 3 or more repeats each.
  std::optional<SpeedupInterval> speedup_interval;
  /// Simulated runs that carry the model's error: the speedup within it
  /// (report/model_error_interval.hpp).
  std::optional<SpeedupInterval> model_error_interval;
};

/// Judges `run` against `baseline` (the `single` run of the same network,
/// backend and machine, or in training the faster of it and `data`; null
/// when there is none).
Judgement judge(const RunSummary& run, const RunSummary* baseline);

}  // namespace splitscope
