// maxpool: the largest element of each window, per channel. Bytes only: it reads the channels it writes.
#include "ir/ops/gradient_rules.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/layer_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {

namespace maxpool_op {
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  gradient_rules::unary(builder, node, gradients, OpKind::kMaxPoolGrad,
                        {gradient_rules::kForwardInput, gradient_rules::kOutputGradient});
}
}  // namespace maxpool_op

namespace maxpool_layer {

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "maxpool";
    d.fields = {"kernel", "stride", "padding"};
    d.read = layer_rules::read_pool;
    return d;
  }();
  return def;
}

}  // namespace maxpool_layer

const OpDef& maxpool_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kMaxPool;
    d.name = "maxpool";
    d.channel_local = true;
    d.split.out = true;
    d.cost = op_rules::channel_local_cost;
    d.input_channels = op_rules::same_channels;
    d.signature = op_rules::pool_signature;
    d.gradient = maxpool_op::gradient;
    d.device_calls = op_rules::one_device_call;
    d.rate_families = {"pool.max"};
    d.pooling = true;
    d.layer = &maxpool_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
