// `horizontal`: contiguous runs of layers per device, balanced by cost. For a
// fully connected or convolutional net the devices take turns (no gain); for
// an unrolled RNN, cell (l, t) waits for (l-1, t) on the previous device and
// (l, t-1) on its own, so all devices work once the wavefront has filled.

#include "plan/plan_builder.hpp"
#include "partitioners/stage_units.hpp"
#include "partitioners/strategies.hpp"

namespace splitscope {
namespace {

class HorizontalPartitioner : public Partitioner {
 public:
  std::string_view name() const override { return "horizontal"; }
  std::string_view summary() const override {
    return "contiguous layers per device, balanced by cost (the layer split)";
  }
  StrategyTraits traits() const override { return {.trains = true}; }
  int max_devices(const Graph& graph) const override { return static_cast<int>(stage_units(graph).size()); }

  Plan partition(std::shared_ptr<const Graph> graph, const PartitionOptions& options) const override {
    require_one_microbatch(options, "horizontal");
    require_devices(options, max_devices(*graph), "horizontal", "one layer per device at least");
    const auto device_of = assign_stages(*graph, options.devices, cost_function(options), "horizontal",
                                         options.stage_starts);
    PlanBuilder builder(graph, "horizontal", traits(), options.devices, 1);
    for (NodeId id : graph->wavefront_order()) {
      if (graph->node(id).kind == OpKind::kInput) continue;
      builder.place(id, 0, full_slice(graph->node(id), {0, graph->batch()}), device_of[id]);
    }
    return builder.build();
  }
};

}  // namespace

std::unique_ptr<Partitioner> make_horizontal_partitioner() {
  return std::make_unique<HorizontalPartitioner>();
}

}  // namespace splitscope
