#include "ir/op_signature.hpp"

#include <fmt/format.h>

#include "ir/layer_costs.hpp"

namespace splitscope {

std::string op_signature(const Graph& graph, NodeId id, const Slice& slice) {
  const OpNode& node = graph.node(id);
  const int64_t rows = slice.batch.size();
  const int64_t outs = slice.out.size();
  const std::string kind(to_string(node.kind));
  switch (node.kind) {
    case OpKind::kDense:
      return fmt::format("dense:b{}:k{}:n{}", rows, slice.reduce.size(), outs);
    case OpKind::kConv2d: {
      const Layer& conv = graph.layer_of(id);
      const Range in = conv_input_channels(conv, slice.out);
      const int64_t groups = in.size() / (conv.input_shape[0] / conv.groups);
      return fmt::format("conv2d:b{}:c{}:h{}:w{}:f{}:k{}x{}:s{}x{}:p{}x{}:g{}", rows, in.size(),
                         conv.input_shape[1], conv.input_shape[2], outs, conv.kernel.h, conv.kernel.w,
                         conv.stride.h, conv.stride.w, conv.padding.h, conv.padding.w, groups);
    }
    case OpKind::kMaxPool:
    case OpKind::kAvgPool: {
      const Layer& pool = graph.layer_of(id);
      return fmt::format("{}:b{}:c{}:h{}:w{}:k{}x{}:s{}x{}", kind, rows, outs, pool.input_shape[1],
                         pool.input_shape[2], pool.kernel.h, pool.kernel.w, pool.stride.h,
                         pool.stride.w);
    }
    case OpKind::kLstmCell:
    case OpKind::kGruCell:
      return fmt::format("{}:b{}:i{}:h{}:u{}:t{}", kind, rows, node.input_shapes[kCellInputSlot][0],
                         graph.layer_of(id).hidden, outs, node.step > 0 ? 1 : 0);
    default:
      return fmt::format("{}:b{}:n{}", kind, rows, outs * inner_count(node.output_shapes.at(0)));
  }
}

}  // namespace splitscope
