#pragma once
/// \file
/// What attention's forward and backward definitions share (ops/*.cpp and
/// the kernels): its sizes, read from the node's shapes and attributes.
///
/// Layout per sample: input [T, 3·H], each position's Q, K and V end to end
/// (PyTorch's in_proj order), head h holding features [h·d, (h+1)·d) of each
/// (d = H / heads); output [T, H], the heads' contexts end to end, ready for
/// the output projection.

#include <cstdint>

#include "ir/op.hpp"
#include "ir/slice.hpp"

namespace splitscope::attention_rules {

struct AttentionDims {
  int64_t positions = 0;  ///< T
  int64_t features = 0;   ///< H
  int64_t heads = 1;
  int64_t head_features = 0;  ///< d = H / heads
};

/// Sizes of a forward attention op or its gradient (whose output is the forward's input).
AttentionDims dims(const OpNode& node);
/// The sizes a slice works on: a feature-cut slice (the head-wise split)
/// holds features [h0·d, h1·d) of the context, so heads h0..h1-1.
AttentionDims slice_dims(const OpNode& node, const Slice& slice);
/// Its Q | K | V (three blocks) and its context (one) of a feature-cut slice.
FeatureCut qkv_features(const Slice& slice);
FeatureCut context_features(const Slice& slice);

/// FLOPs of one sample's forward pass: the scores Q·Kᵀ and the context P·V,
/// each 2·T·T·d per head, so 4·T²·H. A causal mask is counted as the full
/// product (the kernels compute it, then mask), as Megatron's counts do.
int64_t forward_flops_per_sample(const AttentionDims& d);

}  // namespace splitscope::attention_rules
