// avgpool: the mean of each window, per channel. Bytes only: it reads the channels it writes.
#include "ir/ops/gradient_rules.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/layer_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {

namespace avgpool_op {
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  gradient_rules::unary(builder, node, gradients, OpKind::kAvgPoolGrad, {gradient_rules::kOutputGradient});
}
}  // namespace avgpool_op

namespace avgpool_layer {

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "avgpool";
    d.fields = {"kernel", "stride", "padding"};
    d.read = layer_rules::read_pool;
    return d;
  }();
  return def;
}

}  // namespace avgpool_layer

const OpDef& avgpool_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kAvgPool;
    d.name = "avgpool";
    d.channel_local = true;
    d.split.out = true;
    d.cost = op_rules::channel_local_cost;
    d.input_channels = op_rules::same_channels;
    d.signature = op_rules::pool_signature;
    d.gradient = avgpool_op::gradient;
    d.device_calls = op_rules::one_device_call;
    d.rate_families = {"pool.avg"};
    d.pooling = true;
    d.layer = &avgpool_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
