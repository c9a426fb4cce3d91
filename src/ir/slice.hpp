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

#include "ir/feature_cut.hpp"
#include "ir/graph.hpp"
#include "ir/ops/op_def.hpp"
#include "ir/range.hpp"

namespace splitscope {

struct Slice {
  Slice() = default;
  /// Most slices cut no features: (batch, out, reduce) says them all.
  Slice(Range batch_rows, Range out_range, Range reduce_range, FeatureCut feature_cut = {})
      : batch(batch_rows), out(out_range), reduce(reduce_range), features(feature_cut) {}

  Range batch;   ///< sample rows
  Range out;     ///< axis 0 of the output
  Range reduce;  ///< what is summed over (dense and the product gradients; the full range otherwise)
  /// The share of the last axis of a transformer product (linear, attention
  /// and their gradients; gelu beside them): the head-wise tensor split
  /// (feature_cut.hpp). Whole for every other slice.
  FeatureCut features;

  /// True when the op splits along its reduction axis and `reduce` does not
  /// cover all of it (OpDef::partial refines this): the result is a partial sum.
  bool is_partial(const OpNode& node) const;
};

/// The features of input slot `slot` that `slice` reads (OpDef::input_features).
FeatureCut input_features(const OpNode& node, const Slice& slice, int slot);
/// The features of output 0 that `slice` writes (OpDef::output_features).
FeatureCut output_features(const OpNode& node, const Slice& slice);
/// Elements past axis 0 of a `shape` tensor that a cut of its last axis holds
/// (inner_count() for a whole cut).
int64_t cut_inner_count(const Shape& shape, const FeatureCut& cut);
/// The fraction of a tensor's elements that a cut of its last axis holds.
double feature_fraction(const FeatureCut& cut, const Shape& shape);

/// The whole op over rows `batch`.
Slice full_slice(const OpNode& node, Range batch);

/// Cost of a slice, by its op definition's rule (the counting rules of
/// docs/network-format.md). Over slices that tile an op, FLOPs and parameters sum exactly
/// to the op's own.
SliceCost slice_cost(const Graph& graph, NodeId node, const Slice& slice);

}  // namespace splitscope
