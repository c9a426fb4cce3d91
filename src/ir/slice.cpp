#include "ir/slice.hpp"

#include "util/check.hpp"

namespace splitscope {

bool Slice::is_partial(const OpNode& node) const {
  const OpDef& def = op_def(node.kind);
  if (!def.split.reduce) return false;
  if (def.partial != nullptr) return def.partial(node, *this);
  return reduce.size() != node.input_shapes.at(0).at(0);
}

Slice full_slice(const OpNode& node, Range batch) {
  Slice slice;
  slice.batch = batch;
  slice.out = {0, node.output_shapes.at(0).at(0)};
  slice.reduce = {0, node.input_shapes.empty() ? 0 : node.input_shapes.at(0).at(0)};
  return slice;
}

SliceCost slice_cost(const Graph& graph, NodeId id, const Slice& slice) {
  const OpNode& node = graph.node(id);
  SPLITSCOPE_CHECK(slice.out.begin >= 0 && slice.out.end <= node.output_shapes.at(0).at(0),
                   "slice outside the output of " + node.name);
  return op_def(node.kind).cost(node, slice);
}

}  // namespace splitscope
