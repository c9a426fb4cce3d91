#pragma once
// The ONNX files tests/onnx/export_models.py wrote, and `inspect --json` on them.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace splitscope::testing {

/// tests/onnx/models/NAME in the source tree.
std::string onnx_model_path(const std::string& name);

/// A float32 .npy file's shape and elements (what --save-output writes: format 1.0, '<f4', C order).
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;
};
NpyArray read_npy(const std::string& path);

/// `splitscope inspect PATH --json EXTRA`, parsed; fails the test on a non-zero exit.
nlohmann::json inspect_onnx(const std::string& path, const std::string& extra = "");

}  // namespace splitscope::testing
