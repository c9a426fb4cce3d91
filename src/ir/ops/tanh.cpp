// tanh: an element-wise activation. Bytes only (FORMATS.md counts no FLOPs for it).
#include "ir/ops/op_rules.hpp"

namespace splitscope {

const OpDef& tanh_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kTanh;
    d.name = "tanh";
    d.channel_local = true;
    d.activation = true;
    d.split.out = true;
    d.cost = op_rules::channel_local_cost;
    d.input_channels = op_rules::same_channels;
    d.signature = op_rules::elements_signature;
    return d;
  }();
  return def;
}

}  // namespace splitscope
