// `tensor`: Megatron-style tensor parallelism. Consecutive dense layers are
// paired: the first split by output columns, the second by input rows, so the
// pair needs no communication inside it and one all-reduce at its end (the
// second layer's activation is applied after it). Everything else is split
// as `vertical` does. A transformer splits by attention heads instead
// (head_split.hpp): Megatron-LM's own pattern.

#include <algorithm>
#include <set>

#include "partitioners/channel_split.hpp"
#include "partitioners/dense_pairs.hpp"
#include "partitioners/head_split.hpp"
#include "partitioners/strategies.hpp"
#include "partitioners/transformer_blocks.hpp"

namespace splitscope {
namespace {

class TensorPartitioner : public Partitioner {
 public:
  std::string_view name() const override { return "tensor"; }
  std::string_view summary() const override {
    return "dense layers paired column-then-row split, one all-reduce per pair (Megatron)";
  }
  StrategyTraits traits() const override { return {.trains = true, .sequence_parallel = true}; }
  int max_devices(const Graph& graph) const override {
    if (has_attention_blocks(graph)) return head_degrees(graph).back();
    return vertical_device_limit(graph).first;
  }
  /// Without a dense pair (or an attention block) this is the vertical split under another name.
  bool applies(const Graph& graph, int devices) const override {
    if (has_attention_blocks(graph)) {
      const std::vector<int> degrees = head_degrees(graph);
      return std::find(degrees.begin(), degrees.end(), devices) != degrees.end();
    }
    return devices <= max_devices(graph) && !dense_pairs(graph).empty() && backward_follows_split(graph, devices);
  }

  Plan partition(std::shared_ptr<const Graph> graph, const PartitionOptions& options) const override {
    require_one_microbatch(options, "tensor");
    if (has_attention_blocks(*graph)) {
      require_head_degree(*graph, options.devices);
      require_devices(options, max_devices(*graph), "tensor", "it splits attention by heads");
      if (options.sequence_parallel) require_sequence_parallel(*graph, options.devices);
      PlanBuilder builder(graph, "tensor", traits(), options.devices, 1);
      if (options.sequence_parallel && options.devices > 1) {
        builder.note("attention split by heads, MLPs as dense pairs, the output layer and its loss by vocabulary; "
                     "sequence parallel: layer norms and residual adds each run on 1/" +
                     std::to_string(options.devices) +
                     " of the sequence, reduce-scatters and all-gathers in place of all-reduces; embeddings run whole "
                     "on every device, the layers after the last split on device 0");
      } else {
        builder.note("attention split by heads, MLPs as dense pairs, the output layer and its loss by vocabulary; "
                     "embeddings, layer norms and residual adds run whole on every device, the layers after the last "
                     "split on device 0");
      }
      place_head_split(*graph, options.devices, builder, options.sequence_parallel);
      return builder.build();
    }
    if (options.sequence_parallel) require_sequence_parallel(*graph, options.devices);  // refuses: no blocks
    const auto [most, limiter] = vertical_device_limit(*graph);
    require_devices(options, most, "tensor", "layer " + limiter + " has " + std::to_string(most) + " outputs to slice");
    const auto pairs = dense_pairs(*graph);
    std::set<NodeId> seconds;
    for (const auto& pair : pairs) seconds.insert(pair.second);

    PlanBuilder builder(graph, "tensor", traits(), options.devices, 1);
    if (pairs.empty()) builder.note("no consecutive dense layers to pair: this is the vertical split");
    ChannelSplitter splitter(*graph, options.devices, builder);
    for (NodeId id : graph->wavefront_order()) {
      if (graph->node(id).kind == OpKind::kInput) continue;
      if (graph->node(id).pass == Pass::kBackward) {
        splitter.place_backward(id);
      } else if (seconds.count(id)) {
        // Row split over the cut its input arrives in: each device sums over
        // the features it already holds.
        splitter.place_row_split(id, splitter.following_cut(id));
      } else {
        splitter.place_vertical(id);
      }
    }
    return builder.build();
  }
};

}  // namespace

std::unique_ptr<Partitioner> make_tensor_partitioner() { return std::make_unique<TensorPartitioner>(); }

}  // namespace splitscope
