#pragma once
/// \file
/// Weights a network brings with it: an ONNX file's initializers
/// (docs/onnx.md, "Weights"). A network without them -- every network file
/// and zoo network -- runs on params.hpp's deterministic values; one with
/// them runs on its own, on every backend that computes, so that its outputs
/// are the framework's.

#include <string>
#include <vector>

namespace splitscope {

class NetworkWeights {
 public:
  virtual ~NetworkWeights() = default;

  /// Every element of tensor `tensor` (param_tensors() order, params.hpp's
  /// layout) of layer `layer`'s weight set; null where the network brings
  /// none for it. A training graph reads a normalization's own gain and
  /// shift; inference (`training` false) reads them with the file's running
  /// statistics folded in, since splitscope's inference normalizes by the
  /// statistics of a fresh layer (mean 0, variance 1). Safe from several
  /// threads at once; the tensor lives as long as this object.
  virtual const std::vector<float>* tensor(const std::string& layer, int tensor, bool training) const = 0;
};

}  // namespace splitscope
