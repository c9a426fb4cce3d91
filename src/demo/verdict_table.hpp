#pragma once
/// \file
/// The verdict table of `demo rnn`: every way of running the stack, each
/// against the fused single device (not against the cell-by-cell single
/// device that `run` and `compare` judge by), with a verdict and a sentence
/// naming what decided it:
///
///   single device, fused stack      the baseline
///   single device, cell by cell     the same cells, one op each
///   layer split over N devices      the wavefront (horizontal)
///   layer split, M micro-batches    the same with the batch cut (pipeline)
///
/// The split rows are judged by the report library's judge() against the
/// fused run (verdict thresholds 1.05 / 0.95), and its deciding factor is
/// put in words that fit an RNN (the wavefront's fill and drain rather than
/// a generic wait, the cells' total compute against the fused call's).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "demo/fused_baseline.hpp"
#include "demo/rnn_demo_model.hpp"
#include "report/judgement.hpp"
#include "report/makespan_stats.hpp"
#include "report/run_report.hpp"

namespace splitscope {

enum class DemoWay { kFused, kCells, kSplit, kSplitMicrobatched };

/// "single-fused", "single-cells", "layer-split", "layer-split-microbatched" (JSON keys).
std::string_view to_string(DemoWay way);

/// One row of the verdict table.
struct DemoRow {
  DemoWay way = DemoWay::kFused;
  std::string title;  ///< "layer split over 4 devices"
  std::string strategy;  ///< "fused", "single", "horizontal", "pipeline"
  int devices = 1;
  int microbatches = 1;
  std::optional<MakespanStats> makespan;  ///< empty when the run does not fit in memory
  double compute_ms = 0;     ///< compute time summed over devices (representative repeat)
  double transfer_ms = 0;    ///< transfer time, each transfer's summed
  int64_t moved_bytes = 0;   ///< bytes crossing devices
  double idle_share = 0;     ///< idle share of device time
  double speedup = 1;        ///< baseline median / this median (0 when not timed)
  std::optional<Verdict> verdict;  ///< none for the baseline row itself
  std::string decider;       ///< "baseline", "per-op", or judge()'s Decider key
  std::string reason;        ///< one sentence, lower case
};

/// The fused run as a RunSummary judge() can hold a run against: one device,
/// computing the whole time, fitting.
RunSummary fused_summary(const FusedTiming& fused, const Graph& graph);

/// What the rows are held against: the fused stack (its forward pass, or in
/// training its training step); where a backend has no fused training step,
/// the cell-by-cell single device, as `compare` judges a split.
struct DemoBaseline {
  RunSummary summary;  ///< as judge() holds a run against it
  /// What of a pooled machine it had (the cpu's intra-op threads); 0: whole devices.
  int threads = 0;
  std::string name;    ///< in reasons: "the fused stack", "the single device"
  bool fused = true;
};

/// The fused run as the baseline.
DemoBaseline fused_baseline(const FusedTiming& fused, const Graph& graph);
/// The cell-by-cell single-device run as the baseline.
DemoBaseline single_baseline(const RunReport& cells);

/// The baseline row: the fused run's, or in training the cell-by-cell run's.
DemoRow fused_row(const FusedTiming& fused);
DemoRow single_baseline_row(const RunReport& cells);

/// A row for a plan run (cell by cell, or a split) held against the baseline.
DemoRow plan_row(DemoWay way, const RunReport& run, const DemoBaseline& baseline, const RnnDemoShape& shape);
/// The same against the fused run.
DemoRow plan_row(DemoWay way, const RunReport& run, const FusedTiming& fused, const RnnDemoShape& shape);

/// The idle share of the wavefront's ideal fill and drain with one layer per
/// device, cells of equal time and free transfers: (N-1)/(M·T + N-1), each
/// device busy M·T of M·T + N - 1 slices. nullopt when N != L (a device then
/// holds several layers, and the fill depends on the order it runs them in).
std::optional<double> ideal_wavefront_idle(const RnnDemoShape& shape, int devices, int microbatches);

/// Whether `rows` are held against the fused stack (their first row, the
/// baseline, is the fused run's) rather than the cell-by-cell single device.
bool against_fused(const std::vector<DemoRow>& rows);

/// The table, plain text (aligned columns).
std::string verdict_table_text(const std::vector<DemoRow>& rows);

/// One sentence on the split rows against the fused one: who wins, by how
/// much, and why.
std::string demo_conclusion(const std::vector<DemoRow>& rows);

}  // namespace splitscope
