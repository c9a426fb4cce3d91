#pragma once
/// \file
/// A slice of one op's work, and what it costs. Partitioners cut ops into
/// slices; executors compute exactly their slice; the simulator prices it.
///
/// Slicing is along the batch, along axis 0 of the op's (first) output (dense
/// units, conv filters, cell hidden units, channels of a channel-local op), and
/// for a row-split matrix product along the reduction axis (a dense layer's
/// input features; the filters a convolution's input gradient sums over),
/// which leaves a partial sum to be all-reduced.

#include <cstdint>

#include "ir/graph.hpp"
#include "ir/ops/op_def.hpp"
#include "ir/range.hpp"

namespace splitscope {

struct Slice {
  Range batch;   ///< sample rows
  Range out;     ///< axis 0 of the output
  Range reduce;  ///< what is summed over (dense and the product gradients; the full range otherwise)

  /// True when the op splits along its reduction axis and `reduce` does not
  /// cover all of it (OpDef::partial refines this): the result is a partial sum.
  bool is_partial(const OpNode& node) const;
};

/// The whole op over rows `batch`.
Slice full_slice(const OpNode& node, Range batch);

/// Cost of a slice, by its op definition's rule (the counting rules of
/// docs/network-format.md). Over slices that tile an op, FLOPs and parameters sum exactly
/// to the op's own.
SliceCost slice_cost(const Graph& graph, NodeId node, const Slice& slice);

}  // namespace splitscope
