// `single`: the whole network on device 0, the baseline every speedup is against.

#include "plan/plan_builder.hpp"
#include "partitioners/strategies.hpp"

namespace splitscope {
namespace {

class SinglePartitioner : public Partitioner {
 public:
  std::string_view name() const override { return "single"; }
  std::string_view summary() const override { return "the whole network on one device (the baseline)"; }
  StrategyTraits traits() const override { return {.baseline = true, .trains = true}; }
  int max_devices(const Graph&) const override { return 1; }
  /// The baseline runs whatever the device count of the others.
  bool applies(const Graph&, int) const override { return true; }

  Plan partition(std::shared_ptr<const Graph> graph, const PartitionOptions& options) const override {
    require_devices(options, 1, "single", "it runs everything on one device");
    require_one_microbatch(options, "single");
    PlanBuilder builder(graph, "single", traits(), 1, 1);
    for (NodeId id : graph->wavefront_order()) {
      if (graph->node(id).kind == OpKind::kInput) continue;
      builder.place(id, 0, full_slice(graph->node(id), {0, graph->batch()}), 0);
    }
    return builder.build();
  }
};

}  // namespace

std::unique_ptr<Partitioner> make_single_partitioner() { return std::make_unique<SinglePartitioner>(); }

}  // namespace splitscope
