#pragma once
/// \file
/// `splitscope demo rnn`, minus the command line: runs a stacked LSTM or GRU
/// four ways on one backend (fused on one device, cell by cell on one device,
/// layer-split over N devices, layer-split with M micro-batches), reads the
/// wavefront off the layer split's timeline, and judges every way against
/// the fused single device. The textbook's claim, made visible: the split's
/// wavefront keeps every device busy once the pipe fills, and yet one device
/// running the fused stack is often faster.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "demo/fused_baseline.hpp"
#include "demo/rnn_demo_model.hpp"
#include "demo/verdict_table.hpp"
#include "demo/wavefront.hpp"
#include "ir/training_spec.hpp"
#include "partitioners/cost_function.hpp"
#include "report/comparison.hpp"
#include "report/progress.hpp"

namespace splitscope {

/// How the demo runs things on the chosen backend: factories, since the
/// executor (CUDA under --virtual carves N partitions) and the fused baseline
/// (on one partition of that size) depend on the device count.
struct DemoBackend {
  std::string name;  ///< cpu | cuda | sim
  std::function<std::unique_ptr<Executor>(int devices)> executor;
  std::function<std::unique_ptr<FusedBaseline>(int devices)> fused;
  /// Prices ops for the partitioners (the machine's cost model on sim); null: the default roofline.
  std::shared_ptr<const CostFunction> cost;
  /// Refuses a plan this backend cannot hold (InputError), called on every
  /// plan before anything runs, the fused stack included: the cpu backend's
  /// memory check, so the demo refuses what `run` refuses. Null: no check.
  std::function<void(const Plan&)> admit;
};

struct RnnDemoSettings {
  RnnDemoShape shape;
  /// N devices for the split; 0: one per layer. At most the layers.
  int devices = 0;
  /// M micro-batches for the micro-batched split; 0: min(batch, N); 1: no
  /// micro-batched row. At most the batch.
  int microbatches = 0;
  /// `--train`: training steps (forward, loss, backward, update) of the
  /// training graph under this optimizer instead of forward passes, each
  /// timed repeat one step (docs/training.md), held against the backend's
  /// fused training step where it has one (FusedBaseline::trains()), else
  /// against the cell-by-cell single device.
  std::optional<Optimizer> training;
  PipelineSchedule schedule = PipelineSchedule::kGpipe;  ///< training: the micro-batched row's
  bool recompute = false;  ///< training: --recompute (partitioners/recompute.hpp)
};

/// `settings` with N and M resolved and checked against the shape:
/// InputError naming --devices ("at most L, one layer per device") or
/// --microbatches otherwise; the shape is checked by rnn_demo_model().
RnnDemoSettings resolve_settings(RnnDemoSettings settings);

struct RnnDemoResult {
  RnnDemoSettings settings;  ///< resolved
  std::shared_ptr<const Graph> graph;  ///< the training graph in training
  FusedTiming fused;  ///< forward passes only (no timelines in training)
  /// The plan runs (single cell by cell, horizontal, pipeline) as the report
  /// library sees them: judged against the cell-by-cell single run, the way
  /// `compare` would judge them.
  Comparison comparison;
  /// The verdict table, judged against the fused run: fused, cells, split,
  /// split + M; in training against the cells: cells, split, split + M.
  std::vector<DemoRow> rows;
  /// The layer split's wavefront, read off its representative repeat
  /// (forward passes only: a training step's forward and backward waves are
  /// in its timeline and trace).
  Wavefront wavefront;
  bool trains() const { return settings.training.has_value(); }
  /// Whether the rows are held against the fused stack (always without
  /// --train; in training where the backend has a fused training step),
  /// not the cell-by-cell single device.
  bool baseline_fused() const { return against_fused(rows); }
  std::string conclusion;  ///< demo_conclusion() of the rows
};

/// The run of `strategy` in the comparison's primary group; null if none.
const RunReport* find_run(const Comparison& comparison, const std::string& strategy);

/// Runs the demo. `options` gives seed, warm-up and repeats (the simulator
/// predicts once); `progress` shows which run is under way.
RnnDemoResult run_rnn_demo(const RnnDemoSettings& settings, const DemoBackend& backend, const RunOptions& options,
                           ReportContext context, Progress& progress);

/// The lowered demo network of `shape`.
std::shared_ptr<const Graph> demo_graph(const RnnDemoShape& shape);

/// The plan of the layer split (`horizontal`, M = 1) or, for M > 1, the
/// micro-batched one (`pipeline`), over N devices; a training graph's with
/// `settings`' schedule and --recompute.
std::shared_ptr<const Plan> split_plan(const std::shared_ptr<const Graph>& graph, int devices, int microbatches,
                                       const std::shared_ptr<const CostFunction>& cost,
                                       const RnnDemoSettings& settings = {});

}  // namespace splitscope
