#pragma once
/// \file
/// `demo rnn --sweep NAME=V1,V2,...`: the demo's fused single device, layer
/// split and micro-batched split at each value of one shape parameter
/// (hidden, layers, steps or batch), and the crossover: the first value at
/// which a split beats the fused single device (speedup >= 1.05, report/
/// judgement.hpp's "wins"), or none.

#include <optional>
#include <string>
#include <vector>

#include "demo/rnn_demo.hpp"

namespace splitscope {

/// The three ways at one value of the swept parameter.
struct SweepPoint {
  int64_t value = 0;
  int devices = 1;
  int microbatches = 1;
  double fused_ms = 0;                  ///< median
  std::optional<double> split_ms;       ///< median; empty when the split does not fit
  std::optional<double> microbatched_ms;  ///< median; empty when M = 1 or it does not fit
  std::optional<double> split_speedup;    ///< fused / split
  std::optional<double> microbatched_speedup;
  std::string split_reason;  ///< why the layer split wins or loses (verdict_table.hpp's sentence)

  /// The better of the two splits' speedups; empty when neither ran.
  std::optional<double> best_speedup() const;
};

struct SweepResult {
  RnnSweep sweep;
  RnnDemoSettings base;  ///< the shape the other parameters keep
  std::vector<SweepPoint> points;
  std::string fused_implementation;
  std::string fused_method;  ///< of the first point
  bool measured = true;
  RunInfo info;  ///< what the splits ran on (the first point's)
  /// The first value where a split wins against the fused single device.
  std::optional<int64_t> crossover;
};

/// Index of the first point whose best split speedup is a win (>= 1.05).
std::optional<size_t> first_win(const std::vector<SweepPoint>& points);

/// The crossover in one or two sentences: where a split first wins and by
/// how much, and every value where it wins; or that none does, with the
/// closest it came.
std::string crossover_text(const SweepResult& result);

/// One point of the sweep, resolved (resolve_settings). An explicit --devices
/// is capped at a swept layer count, and an explicit --microbatches at a
/// swept batch, so that `--sweep layers=1,2,100 --devices 8` splits over 1,
/// 2 and 8 devices. A bad point is an InputError naming --sweep and the
/// value (`--sweep: steps=1000000: ...`), not the shape options it set.
RnnDemoSettings resolve_sweep_point(const RnnDemoSettings& base, const RnnSweep& sweep, int64_t value);

/// Runs the sweep, every point resolved (resolve_sweep_point) and admitted
/// (DemoBackend::admit) before any runs. The cell-by-cell single run is left
/// out: the sweep is about the split against the fused stack.
SweepResult run_rnn_sweep(const RnnDemoSettings& base, const RnnSweep& sweep, const DemoBackend& backend,
                          const RunOptions& options, Progress& progress);

/// One row per value: fused, split and micro-batched times, both speedups,
/// the verdict of the better split; then crossover_text().
std::string sweep_table_text(const SweepResult& result);

}  // namespace splitscope
