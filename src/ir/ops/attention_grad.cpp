// attention_grad: d(Q | K | V) [T, 3·H] from Q, K, V (slot 0) and the
// context's gradient dO (slot 1). Per head it recomputes S = Q·Kᵀ and P, then
// dV = Pᵀ·dO, dP = dO·Vᵀ, dS = P ⊙ (dP - rowsum(dP ⊙ P)), dQ = dS·K/√d,
// dK = dSᵀ·Q/√d: five products of T×T×d, 10·T²·H FLOPs a sample (2.5 times
// the forward's, as the recomputing backward of a fused kernel).
#include <fmt/format.h>

#include "ir/ops/attention_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace attention_grad_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  const attention_rules::AttentionDims d = attention_rules::slice_dims(node, slice);
  SliceCost c;
  c.flops = slice.batch.size() * 5 * attention_rules::forward_flops_per_sample(d) / 2;
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = c.bytes_written + slice.batch.size() * d.positions * d.features * op_rules::kFloat;
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  const attention_rules::AttentionDims d = attention_rules::slice_dims(node, slice);
  return fmt::format("attention_grad:b{}:t{}:h{}:d{}{}", slice.batch.size(), d.positions, d.heads, d.head_features,
                     node.attrs.causal ? ":causal" : "");
}

GemmDims gemm(const OpNode& node, const Slice& slice) {
  const attention_rules::AttentionDims d = attention_rules::slice_dims(node, slice);
  return GemmDims{d.positions, d.positions, d.head_features, 5 * d.heads * slice.batch.size()};
}

}  // namespace attention_grad_op

const OpDef& attention_grad_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kAttentionGrad;
    d.name = "attention_grad";
    d.cost_class = CostClass::kMatrix;
    d.efficiency_like = "attention";
    d.cost = attention_grad_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = attention_grad_op::signature;
    d.input_features = [](const OpNode&, const Slice& slice, int slot) {
      return slot == 0 ? attention_rules::qkv_features(slice) : attention_rules::context_features(slice);
    };
    d.output_features = [](const OpNode&, const Slice& slice) { return attention_rules::qkv_features(slice); };
    d.gemm = attention_grad_op::gemm;
    d.device_calls = [](const SliceCalls&) { return 6; };
    return d;
  }();
  return def;
}

}  // namespace splitscope
