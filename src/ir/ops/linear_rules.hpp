#pragma once
/// \file
/// What linear's forward and backward definitions share (ops/*.cpp only):
/// its sizes and weights. A linear op is a dense layer applied at each
/// position of a sequence, [T, in] -> [T, units], with the dense layer's
/// weights, W [in, units] and b [units] (nn.Linear on the last axis).

#include <cstdint>
#include <vector>

#include "ir/ops/op_def.hpp"

namespace splitscope::linear_rules {

struct LinearDims {
  int64_t positions = 0;  ///< T
  int64_t inputs = 0;     ///< in
  int64_t units = 0;
};

/// From the forward op's shapes, or a backward op's (whose sequence shapes are the forward's, swapped or not).
LinearDims dims(const OpNode& node);

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
