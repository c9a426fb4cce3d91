#pragma once
/// \file
/// A parsed, validated network: what a network file says, with every shape
/// inferred. Lowering turns it into a Graph (graph.hpp).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/layer.hpp"
#include "ir/network_weights.hpp"
#include "ir/shape.hpp"

namespace splitscope {

/// One named input of a network (`"input"` when the file gives one shape).
struct NetworkInput {
  std::string name;
  Shape shape;  ///< one sample
};

/// Layers are in a dependency order (each reads only the inputs and layers
/// before it); the last one is the network's output.
struct Model {
  std::string name;
  std::string source;  ///< the file it came from, for messages
  int64_t batch = 1;   ///< samples in one run
  Shape input;         ///< one sample of the first input (the only one in most networks)
  std::vector<NetworkInput> inputs;  ///< every input, in file order; inputs[0].shape == input
  std::vector<Layer> layers;
  /// The network's own weights (an ONNX file's), or null: params.hpp's.
  std::shared_ptr<const NetworkWeights> weights;

  /// Per-sample shape of the network's output.
  const Shape& output_shape() const { return layers.empty() ? input : layers.back().output_shape; }
};

}  // namespace splitscope
