#pragma once
/// \file
/// An ONNX file as a splitscope network (docs/onnx.md): read, batch fixed,
/// shapes inferred by ONNX, every node mapped to a layer or folded to a
/// constant, then checked by the network-file parser like any network.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ir/model.hpp"

namespace splitscope {

/// The network file (docs/network-format.md) the ONNX file at `path` maps
/// to; `batch` fills a dynamic batch dimension and sets the run's batch.
nlohmann::json onnx_network_document(const std::string& path, std::optional<int64_t> batch);

/// The network with the file's weights (Model::weights, docs/onnx.md
/// "Weights"), or, where they cannot be its own, without them and the reason
/// in `weights_note` (the backends then run params.hpp's weights).
struct OnnxModel {
  Model model;
  std::string weights_note;
  /// Groups of nodes recognised as one layer (onnx_patterns.hpp), one line each, for a note on stderr.
  std::vector<std::string> pattern_notes;
};
OnnxModel import_onnx_model(const std::string& path, std::optional<int64_t> batch);

/// The same network, parsed and validated (import_onnx_model()'s model).
Model load_onnx_model(const std::string& path, std::optional<int64_t> batch);

}  // namespace splitscope
