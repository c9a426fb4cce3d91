// embedding_grad_weight: dW[id(b, t)] += dY[b, t] for every position of the
// slice's samples, added to the running sum of the micro-batches before it.
// Reads the ids (slot 0) and dY (slot 1); writes the whole table's gradient
// (vocab·F floats: a dense gradient, as PyTorch's default sparse=False),
// and the position table's, dP[t] += Σ_b dY[b, t], where it has one.
#include <fmt/format.h>

#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace embedding_grad_weight_op {

using op_rules::kFloat;

int64_t positions(const OpNode& node) { return node.output_shapes.at(0).at(0); }
int64_t table_elements(const OpNode& node) {
  return (node.attrs.vocab + (node.attrs.positions ? positions(node) : 0)) * node.output_shapes.at(0).back();
}

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_read = slice.batch.size() * element_count(node.input_shapes.at(0)) * kFloat +
                 op_rules::output_bytes(node, slice);
  c.bytes_written = table_elements(node) * kFloat;
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("embedding_grad_weight:b{}:t{}:v{}:f{}", slice.batch.size(), node.output_shapes.at(0).at(0),
                     node.attrs.vocab, node.output_shapes.at(0).back());
}

Slice from_forward(const OpNode&, const Slice& forward) { return forward; }

Range whole_table(const OpNode& node, const Slice&, int tensor) {
  return {0, (tensor == 0 ? node.attrs.vocab : positions(node)) * node.output_shapes.at(0).back()};
}

}  // namespace embedding_grad_weight_op

const OpDef& embedding_grad_weight_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kEmbeddingGradWeight;
    d.name = "embedding_grad_weight";
    d.efficiency_like = "embedding";
    d.writes_gradient = true;
    d.cost = embedding_grad_weight_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = embedding_grad_weight_op::signature;
    d.from_forward = embedding_grad_weight_op::from_forward;
    d.param_range = embedding_grad_weight_op::whole_table;
    // Zero (or copy in the running sum), then scatter-add.
    d.device_calls = [](const SliceCalls&) { return 2; };
    return d;
  }();
  return def;
}

}  // namespace splitscope
