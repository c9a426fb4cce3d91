#pragma once
/// \file
/// A share of the last axis (the features) of a sequence op's [T, F]
/// tensors: how the tensor strategy splits a transformer by attention heads
/// (Megatron). Slices and values cut along axis 0 (ir/slice.hpp) and, for the
/// transformer's products, along this axis too.
///
/// A cut is `blocks` equal blocks of the axis, holding `range` of each: the
/// QKV projection's output [T, 3·H] (Q | K | V end to end) cut for heads
/// h0..h1 holds features [h0·d, h1·d) of each of the three blocks, a strided
/// slice, which the device stores end to end as its own [T, 3·H/t] (the
/// Q | K | V of its heads, which attention's kernels read unchanged). An
/// empty range is the whole axis.

#include <cstdint>
#include <string>

#include "ir/range.hpp"

namespace splitscope {

struct FeatureCut {
  Range range;     ///< within each block; empty: the whole axis
  int blocks = 1;  ///< equal blocks the axis is made of, each cut alike
  /// linear and its gradients: `range` cuts the weights' rows (the input
  /// features, a row split leaving partial sums) rather than their columns
  /// (the units). Unused by the other kinds.
  bool rows = false;

  bool whole() const { return range.empty(); }
  /// Elements of an axis of `axis` elements that the cut holds.
  int64_t count(int64_t axis) const { return whole() ? axis : range.size() * blocks; }
  bool operator==(const FeatureCut&) const = default;
  auto operator<=>(const FeatureCut&) const = default;
  /// "", or " features [0, 8)x3" for labels and messages.
  std::string to_string() const;
};

/// The cut `blocks` blocks of `range` (the whole axis where `range` is all of a block).
FeatureCut feature_cut(Range range, int blocks, int64_t axis);

}  // namespace splitscope
