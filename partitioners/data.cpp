// `data` (mirrored data parallelism): N replicas of the whole network, the
// batch split N ways (the first B mod N replicas one row more). A forward run
// is batch-split inference and moves nothing; a training step ends with one
// ring all-reduce per weight slice of its gradient, which the plan builder
// places: each starts as soon as its layer's backward has written the
// gradient on every replica, so it overlaps the backward of the layers
// before it (one bucket per layer, as PyTorch DDP's buckets in the limit).
// The alternative every model split must beat.
#include "partitioners/plan_builder.hpp"
#include "partitioners/strategies.hpp"

namespace splitscope {
namespace {

class DataPartitioner : public Partitioner {
 public:
  std::string_view name() const override { return "data"; }
  std::string_view summary() const override {
    return "replicas of the whole network, the batch split between them, gradients all-reduced";
  }
  StrategyTraits traits() const override { return {.trains = true, .replicated = true}; }
  int max_devices(const Graph& graph) const override {
    return static_cast<int>(std::min<int64_t>(graph.batch(), int64_t{1} << 20));
  }
  /// The baseline of a training comparison beside `single`; forward
  /// comparisons run it when asked (`--strategies data`).
  bool applies(const Graph& graph, int devices) const override {
    return graph.is_training() && devices > 1 && devices <= max_devices(graph);
  }

  Plan partition(std::shared_ptr<const Graph> graph, const PartitionOptions& options) const override {
    require_one_microbatch(options, "data");
    require_devices(options, max_devices(*graph), "data", "one sample per replica at least");
    const auto rows = split_evenly(graph->batch(), options.devices);
    PlanBuilder builder(graph, "data", traits(), options.devices, 1);
    for (NodeId id : graph->wavefront_order()) {
      if (graph->node(id).kind == OpKind::kInput) continue;
      for (int device = 0; device < options.devices; ++device) {
        builder.place(id, 0, full_slice(graph->node(id), rows[static_cast<size_t>(device)]), device);
      }
    }
    return builder.build();
  }
};

}  // namespace

std::unique_ptr<Partitioner> make_data_partitioner() { return std::make_unique<DataPartitioner>(); }

}  // namespace splitscope
