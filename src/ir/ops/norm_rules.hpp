#pragma once
/// \file
/// What the normalization kinds' definitions share (ops/*.cpp only): their
/// gain and shift tensors, and their byte counts.
///
/// Batch norm and layer norm hold gamma and beta, one of each per normalized
/// channel (batch norm) or feature (layer norm): PyTorch's parameters, 2·C.
/// Running mean and variance are buffers, not parameters; they are not
/// counted, moved or updated by the optimizer.

#include <vector>

#include "ir/ops/op_def.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope::norm_rules {

/// Index of each tensor in a normalization's weights.
inline constexpr int kGamma = 0;
inline constexpr int kBeta = 1;

/// gamma [width] (starting near 1) and beta [width] (near 0). The small
/// spread around PyTorch's 1 and 0 lets a gradient test see every element.
std::vector<ParamTensor> gain_and_shift(int64_t width);

/// Batch norm's tensors are per channel: a slice holds its channels'.
Range channel_params(const OpNode& node, const Slice& slice, int tensor);
/// Layer norm's tensors are per feature of the last axis: every slice holds them whole.
Range feature_params(const OpNode& node, const Slice& slice, int tensor);

/// Layer norm over a sequence ([T, F]) normalizes each position alone: a
/// slice of the positions (sequence parallelism) reads those positions of
/// its inputs; a sample of one axis ([F]) is read whole.
Range position_channels(const OpNode& node, const Slice& slice, int slot);
/// Layer norm's weights for any slice of the positions: all of them (the
/// parameter value of the whole op), so every position's slice shares one.
Slice whole_positions(const OpNode& node, const Slice& slice);

/// The elements per channel of one sample (H·W, or 1 after a dense layer).
int64_t channel_inner(const OpNode& node);
/// The features layer norm normalizes over (the last axis).
int64_t features(const OpNode& node);

/// A weight gradient's one kernel; adding to the running sum of earlier
/// micro-batches, it first copies that sum in (as the products do).
int gradient_calls(const SliceCalls& calls);

}  // namespace splitscope::norm_rules
