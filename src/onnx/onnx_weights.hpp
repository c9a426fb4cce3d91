#pragma once
/// \file
/// An ONNX file's initializers as the network's own weights (docs/onnx.md,
/// "Weights"): each weighted layer's tensors, found by name in the file
/// (initializers or Constant nodes) and laid out as params.hpp's tensors,
/// converted on first use, so that `inspect` and the simulator, which read
/// no weights, pay nothing for them.

#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ir/network_weights.hpp"
#include "onnx/onnx_import_state.hpp"

namespace splitscope {

class OnnxWeights final : public NetworkWeights {
 public:
  /// `layers`: each weighted layer's tensors in `model`. Call
  /// onnx_weights_problem() first: every tensor must be there.
  OnnxWeights(std::shared_ptr<const ::onnx::ModelProto> model, std::map<std::string, OnnxLayerWeights> layers);

  const std::vector<float>* tensor(const std::string& layer, int tensor, bool training) const override;

 private:
  std::vector<std::vector<float>> convert(const OnnxLayerWeights& layer, bool training) const;

  std::shared_ptr<const ::onnx::ModelProto> model_;
  std::map<std::string, OnnxLayerWeights> layers_;
  mutable std::mutex mutex_;
  /// (layer, training) -> its tensors; map nodes never move, so the pointers handed out stay valid.
  mutable std::map<std::pair<std::string, bool>, std::vector<std::vector<float>>> converted_;
};

/// Why the file's weights cannot be the network's, or "": a tensor that is
/// not in the file (or held as external data, or not as float or double),
/// or a GRU with a recurrent bias on its new gate (PyTorch's b_hn), which
/// splitscope's GRU has no place for.
std::string onnx_weights_problem(const ::onnx::ModelProto& model, const std::map<std::string, OnnxLayerWeights>& layers);

}  // namespace splitscope
