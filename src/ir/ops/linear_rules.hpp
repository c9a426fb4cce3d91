#pragma once
/// \file
/// What linear's forward and backward definitions share (ops/*.cpp only):
/// its sizes and weights. A linear op is a dense layer applied at each
/// position of a sequence, [T, in] -> [T, units], with the dense layer's
/// weights, W [in, units] and b [units] (nn.Linear on the last axis).

#include <cstdint>
#include <vector>

#include "ir/ops/op_def.hpp"
#include "ir/slice.hpp"

namespace splitscope::linear_rules {

struct LinearDims {
  int64_t positions = 0;  ///< T
  int64_t inputs = 0;     ///< in
  int64_t units = 0;
};

/// From the forward op's shapes, or a backward op's (whose sequence shapes are the forward's, swapped or not).
LinearDims dims(const OpNode& node);

/// The sizes a slice works on: the forward's, with its share of the input
/// features (a row split, FeatureCut::rows) or of the units (a column split)
/// where it is feature-cut (ir/feature_cut.hpp).
LinearDims slice_dims(const OpNode& node, const Slice& slice);
/// Whether a slice carries the bias: every column slice, and of a row split
/// only the one starting the reduction (params.hpp's slice_carries_bias).
bool carries_bias(const OpNode& node, const Slice& slice);
/// The weights a slice holds: in·units (+ units with the bias), sliced.
int64_t slice_param_count(const OpNode& node, const Slice& slice);
/// The activation features of X (the product's input, `of_input`) or of Y
/// (its output) that a feature-cut slice touches: its cut on that side,
/// whole on the other.
FeatureCut x_features(const Slice& slice);
FeatureCut y_features(const Slice& slice);
/// A slice that sums over part of a reduction: the forward's row split, and
/// the input gradient's column split (dX sums over the units).
bool forward_partial(const OpNode& node, const Slice& slice);
bool grad_input_partial(const OpNode& node, const Slice& slice);

/// W [in, units] and, with a bias, b [units], as a dense layer's.
std::vector<ParamTensor> params(const OpNode& node);
/// Every slice holds them whole (linear is sliced by samples only).
Range whole_tensor(const OpNode& node, const Slice& slice, int tensor);
/// in·units (+ units): the weight set.
int64_t param_count(const OpNode& node);
/// rows·T products of [in] by [in, units]: m = rows·T.
GemmDims gemm(const OpNode& node, const Slice& slice);
/// "KIND:b2:t5:k6:n8".
std::string signature(const OpNode& node, const Slice& slice);

}  // namespace splitscope::linear_rules
