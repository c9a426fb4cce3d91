#pragma once
// The ONNX files tests/onnx/export_models.py wrote, and `inspect --json` on them.

#include <nlohmann/json.hpp>
#include <string>

namespace splitscope::testing {

/// tests/onnx/models/NAME in the source tree.
std::string onnx_model_path(const std::string& name);

/// `splitscope inspect PATH --json EXTRA`, parsed; fails the test on a non-zero exit.
nlohmann::json inspect_onnx(const std::string& path, const std::string& extra = "");

}  // namespace splitscope::testing
