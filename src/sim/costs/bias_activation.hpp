#pragma once
/// \file
/// The bias and activation after a dense or conv2d layer's product, as a
/// kernel of its own. cuBLAS's GEMMs (cublasGemmEx: C = α·op(A)·op(B) +
/// β·C) and cuDNN's cudnnConvolutionForward (y = α·conv(x, w) + β·y) take no
/// per-channel bias and apply no activation (cuBLAS and cuDNN API
/// references). Unless a framework calls a fused entry point (cuDNN's
/// cudnnConvolutionBiasActivationForward, cuBLASLt's epilogues), the bias
/// and the activation run as element-wise kernels after the product
/// (TensorFlow's BiasAdd and Relu ops, Caffe's bias and ReLU layers), as in
/// our CUDA executor (one BiasActivation kernel).
/// The rules price them as that one kernel: a streaming pass that reads and
/// writes the output (and reads the bias), 1 FLOP per element for each of
/// the bias and the activation, plus a launch:
///
///   seconds = max(FLOPs / fp32 peak, bytes / achieved DRAM rate) + launch
///
/// A slice whose product is a partial sum (a reduce slice, summed later)
/// applies no activation, and only the first reduce slice adds the bias
/// (src/exec/cuda/plan_compiler.cpp does the same).

#include <cstdint>

#include "ir/graph.hpp"
#include "ir/slice.hpp"
#include "sim/machine/device_facts.hpp"

namespace splitscope {

struct BiasActivation {
  int64_t outputs = 0;   ///< output elements the pass touches
  int64_t channels = 0;  ///< bias values read (one per output channel of the slice)
  bool bias = false;
  bool activation = false;

  bool any() const { return outputs > 0 && (bias || activation); }
};

/// What follows the product of `slice` of a dense or conv2d `node`.
BiasActivation bias_activation_of(const OpNode& node, const Slice& slice);

/// The pass's seconds on `facts`' device, launch included; 0 when it does nothing.
double bias_activation_seconds(const DeviceFacts& facts, const BiasActivation& pass);

}  // namespace splitscope
