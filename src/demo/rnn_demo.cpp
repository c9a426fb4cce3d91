#include "demo/rnn_demo.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "run/run_driver.hpp"
#include "ir/lower.hpp"
#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

std::shared_ptr<const Plan> checked_plan(const std::shared_ptr<const Graph>& graph, const std::string& strategy,
                                         int devices, int microbatches,
                                         const std::shared_ptr<const CostFunction>& cost,
                                         const RnnDemoSettings& settings) {
  PartitionOptions options;
  options.devices = devices;
  options.microbatches = microbatches;
  options.cost = cost;
  if (graph->is_training()) {
    options.schedule = settings.schedule;
    options.recompute = settings.recompute;
  }
  auto plan = std::make_shared<const Plan>(make_plan(*make_partitioner(strategy), graph, options));
  check(*plan);
  return plan;
}

}  // namespace

RnnDemoSettings resolve_settings(RnnDemoSettings settings) {
  rnn_demo_model(settings.shape);  // InputError naming the option for a bad shape
  const int64_t layers = settings.shape.layers;
  if (settings.devices == 0) settings.devices = static_cast<int>(std::min<int64_t>(layers, 1 << 20));
  if (settings.devices < 1) {
    throw InputError("--devices", "", fmt::format("must be at least 1, got {}", settings.devices));
  }
  if (settings.devices > layers) {
    throw InputError("--devices", "",
                     fmt::format("at most {} for a stack of {} layers: the layer split gives every device one layer "
                                 "at least; use --devices {} or fewer, or more --layers",
                                 layers, layers, layers));
  }
  const int64_t batch = settings.shape.batch;
  if (settings.microbatches == 0) settings.microbatches = static_cast<int>(std::min<int64_t>(batch, settings.devices));
  if (settings.microbatches < 1 || settings.microbatches > batch) {
    throw InputError("--microbatches", "",
                     fmt::format("must be between 1 and the batch ({}), got {}", batch, settings.microbatches));
  }
  return settings;
}

std::shared_ptr<const Graph> demo_graph(const RnnDemoShape& shape) {
  return std::make_shared<const Graph>(lower(rnn_demo_model(shape)));
}

std::shared_ptr<const Plan> split_plan(const std::shared_ptr<const Graph>& graph, int devices, int microbatches,
                                       const std::shared_ptr<const CostFunction>& cost,
                                       const RnnDemoSettings& settings) {
  return microbatches > 1 ? checked_plan(graph, "pipeline", devices, microbatches, cost, settings)
                          : checked_plan(graph, "horizontal", devices, 1, cost, settings);
}

const RunReport* find_run(const Comparison& comparison, const std::string& strategy) {
  if (comparison.groups.empty()) return nullptr;
  for (const RunReport& run : comparison.primary().runs) {
    if (run.summary.strategy == strategy) return &run;
  }
  return nullptr;
}

RnnDemoResult run_rnn_demo(const RnnDemoSettings& asked, const DemoBackend& backend, const RunOptions& options,
                           ReportContext context, Progress& progress) {
  RnnDemoResult result;
  result.settings = resolve_settings(asked);
  const RnnDemoSettings& settings = result.settings;
  result.graph = demo_graph(settings.shape);
  if (settings.training) result.graph = std::make_shared<const Graph>(training_graph(*result.graph, *settings.training));

  // Plans first: an impossible one fails before anything runs.
  std::vector<std::shared_ptr<const Plan>> plans{
      checked_plan(result.graph, "single", 1, 1, backend.cost, settings),
      split_plan(result.graph, settings.devices, 1, backend.cost, settings)};
  if (settings.microbatches > 1) {
    plans.push_back(split_plan(result.graph, settings.devices, settings.microbatches, backend.cost, settings));
  }
  if (backend.admit) {
    for (const auto& plan : plans) backend.admit(*plan);
  }
  auto executor = backend.executor(settings.devices);

  RunOptions run = options;
  run.want_output = false;
  run.on_repeat = progress.repeat_callback();
  // In training the fused stack is the baseline where the backend has a
  // fused training step; else the cell-by-cell single device is.
  auto fused = backend.fused(settings.devices);
  const bool against_fused = !settings.training || fused->trains();
  if (against_fused) {
    progress.begin_run(fmt::format("fused stack on one device ({})", backend.name));
    result.fused = fused->run(result.graph, run);
    progress.end_run();
  }

  // In training each timed repeat is a step (a warm-up would be one too).
  RunRequest request;
  request.options = run;
  request.train = settings.training.has_value();
  request.steps = run.repeats;
  ComparisonBuilder builder(std::move(context));
  for (const auto& plan : plans) {
    progress.begin_run(fmt::format("{} over {} device{} ({})", plan->strategy, plan->devices,
                                   plan->devices == 1 ? "" : "s", backend.name));
    builder.add(plan, run_plan(*executor, *plan, request));
    progress.end_run();
  }
  result.comparison = std::move(builder).build();

  std::vector<std::pair<DemoWay, const char*>> ways{{DemoWay::kSplit, "horizontal"},
                                                    {DemoWay::kSplitMicrobatched, "pipeline"}};
  std::optional<DemoBaseline> baseline;
  if (!against_fused) {
    const RunReport* cells = find_run(result.comparison, "single");
    SPLITSCOPE_CHECK(cells != nullptr, "the demo's single run is missing");
    result.rows.push_back(single_baseline_row(*cells));
    if (cells->summary.timed()) baseline = single_baseline(*cells);
  } else {
    result.rows.push_back(fused_row(result.fused));
    baseline = fused_baseline(result.fused, *result.graph);
    ways.insert(ways.begin(), {DemoWay::kCells, "single"});
  }
  for (const auto& [way, strategy] : ways) {
    const RunReport* run_report = find_run(result.comparison, strategy);
    if (run_report != nullptr && baseline) result.rows.push_back(plan_row(way, *run_report, *baseline, settings.shape));
  }
  const RunReport* split = find_run(result.comparison, "horizontal");
  if (!settings.training && split != nullptr && split->summary.timed()) {
    result.wavefront = analyse_wavefront(*split->plan, split->timeline);
  }
  result.conclusion = demo_conclusion(result.rows);
  return result;
}

}  // namespace splitscope
