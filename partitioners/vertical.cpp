// `vertical`: every layer sliced across all devices — dense by output
// neurons, conv2d by filters (along whole groups when it can), recurrent
// cells by hidden units — with the all-gathers the next layer needs. A fully
// connected net all-gathers every layer; a grouped CNN moves nothing inside
// its grouped run of layers.

#include "partitioners/channel_split.hpp"
#include "partitioners/strategies.hpp"

namespace splitscope {
namespace {

class VerticalPartitioner : public Partitioner {
 public:
  std::string_view name() const override { return "vertical"; }
  std::string_view summary() const override {
    return "every layer sliced across the devices, with the all-gathers it needs";
  }
  StrategyTraits traits() const override { return {.trains = true}; }
  int max_devices(const Graph& graph) const override { return vertical_device_limit(graph).first; }
  /// In training, where every sliced layer's backward can follow its slices.
  bool applies(const Graph& graph, int devices) const override {
    return devices <= max_devices(graph) && backward_follows_split(graph, devices);
  }

  Plan partition(std::shared_ptr<const Graph> graph, const PartitionOptions& options) const override {
    require_one_microbatch(options, "vertical");
    const auto [most, limiter] = vertical_device_limit(*graph);
    require_devices(options, most, "vertical", "layer " + limiter + " has " + std::to_string(most) + " outputs to slice");
    PlanBuilder builder(graph, "vertical", traits(), options.devices, 1);
    ChannelSplitter splitter(*graph, options.devices, builder);
    bool whole_noted = false;
    for (NodeId id : graph->wavefront_order()) {
      const OpNode& node = graph->node(id);
      if (node.kind == OpKind::kInput) continue;
      if (node.pass == Pass::kBackward) {
        splitter.place_backward(id);
        continue;
      }
      if (!op_def(node.kind).split.out && !whole_noted && options.devices > 1) {
        builder.note(std::string(to_string(node.kind)) + " needs its whole input, so it runs whole on device 0");
        whole_noted = true;
      }
      splitter.place_vertical(id);
    }
    return builder.build();
  }
};

}  // namespace

std::unique_ptr<Partitioner> make_vertical_partitioner() { return std::make_unique<VerticalPartitioner>(); }

}  // namespace splitscope
