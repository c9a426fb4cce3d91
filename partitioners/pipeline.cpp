// `pipeline`: the layer split of `horizontal`, with the batch cut into M
// micro-batches that flow through the stages in fill-drain (GPipe) order:
// each device runs micro-batch 0, then 1, ... so stage s starts micro-batch m
// as soon as stage s-1 hands it over. Ideal bubble: (N-1)/(M+N-1).

#include <fmt/format.h>

#include <algorithm>

#include "ir/model_limits.hpp"
#include "plan/plan_builder.hpp"
#include "partitioners/stage_units.hpp"
#include "partitioners/strategies.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

class PipelinePartitioner : public Partitioner {
 public:
  std::string_view name() const override { return "pipeline"; }
  std::string_view summary() const override {
    return "the layer split with micro-batches in fill-drain order (GPipe)";
  }
  StrategyTraits traits() const override { return {.microbatched = true, .trains = true}; }
  int max_devices(const Graph& graph) const override { return static_cast<int>(stage_units(graph).size()); }

  Plan partition(std::shared_ptr<const Graph> graph, const PartitionOptions& options) const override {
    require_devices(options, max_devices(*graph), "pipeline", "one layer per stage at least");
    if (options.microbatches < 1 || options.microbatches > graph->batch()) {
      throw InputError("--microbatches", "",
                       "must be between 1 and the batch (" + std::to_string(graph->batch()) + "), got " +
                           std::to_string(options.microbatches));
    }
    // M copies of every op: held to the network's own op limit (ir/model_limits.hpp) before any is made.
    const int64_t ops = static_cast<int64_t>(graph->num_nodes());
    if (ops > kMaxGraphOps / options.microbatches) {
      throw InputError("--microbatches", "",
                       fmt::format("{} micro-batches of the {} ops of {} make more than {} ops, more than a run can "
                                   "schedule; use at most {}",
                                   options.microbatches, ops, graph->name(), kMaxGraphOps,
                                   std::max<int64_t>(1, kMaxGraphOps / ops)));
    }
    const auto device_of = assign_stages(*graph, options.devices, cost_function(options), "pipeline",
                                         options.stage_starts);
    const auto rows = split_evenly(graph->batch(), options.microbatches);
    const auto order = graph->wavefront_order();
    PlanBuilder builder(graph, "pipeline", traits(), options.devices, options.microbatches);
    // Every micro-batch's forward, then (training) every backward: a
    // dependency order whose per-device order is GPipe's; 1F1B reorders
    // each stage's schedule (pipeline_schedule.hpp).
    for (const Pass pass : {Pass::kForward, Pass::kBackward}) {
      for (int mb = 0; mb < options.microbatches; ++mb) {
        for (NodeId id : order) {
          if (graph->node(id).kind == OpKind::kInput || graph->node(id).pass != pass) continue;
          builder.place(id, mb, full_slice(graph->node(id), rows[static_cast<size_t>(mb)]), device_of[id]);
        }
      }
    }
    builder.set_pipeline_schedule(options.schedule);
    return builder.build();
  }
};

}  // namespace

std::unique_ptr<Partitioner> make_pipeline_partitioner() { return std::make_unique<PipelinePartitioner>(); }

}  // namespace splitscope
