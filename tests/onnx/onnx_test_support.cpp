#include "onnx_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "../cli/cli_test_support.hpp"

namespace splitscope::testing {

std::string onnx_model_path(const std::string& name) {
  const char* root = std::getenv("SPLITSCOPE_SOURCE_ROOT");
  return std::string(root ? root : ".") + "/tests/onnx/models/" + name;
}

nlohmann::json inspect_onnx(const std::string& path, const std::string& extra) {
  const CommandResult result = run_splitscope("inspect " + path + " --json " + extra);
  EXPECT_EQ(result.exit_code, 0) << path << ": " << result.err;
  if (result.exit_code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(result.out);
}

}  // namespace splitscope::testing
