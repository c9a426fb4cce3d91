// maxpool: the largest element of each window, per channel. Bytes only: it reads the channels it writes.
#include "ir/ops/op_rules.hpp"

namespace splitscope {

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
    return d;
  }();
  return def;
}

}  // namespace splitscope
