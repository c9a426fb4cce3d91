#pragma once
/// \file
/// An ONNX file as a splitscope network (docs/onnx.md): read, batch fixed,
/// shapes inferred by ONNX, every node mapped to a layer or folded to a
/// constant, then checked by the network-file parser like any network.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ir/model.hpp"

namespace splitscope {

/// The network file (docs/network-format.md) the ONNX file at `path` maps
/// to; `batch` fills a dynamic batch dimension and sets the run's batch.
nlohmann::json onnx_network_document(const std::string& path, std::optional<int64_t> batch);

/// The same network, parsed and validated.
Model load_onnx_model(const std::string& path, std::optional<int64_t> batch);

}  // namespace splitscope
