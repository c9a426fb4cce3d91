#include "onnx_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "../cli/cli_test_support.hpp"

namespace splitscope::testing {

std::string onnx_model_path(const std::string& name) {
  const char* root = std::getenv("SPLITSCOPE_SOURCE_ROOT");
  return std::string(root ? root : ".") + "/tests/onnx/models/" + name;
}

NpyArray read_npy(const std::string& path) {
  const std::string bytes = read_text_file(path);
  NpyArray out;
  EXPECT_GE(bytes.size(), 10u) << path;
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return out;
  const size_t header_length = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  const std::string header = bytes.substr(10, header_length);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
  const size_t open = header.find('(', header.find("'shape'"));
  const size_t close = header.find(')', open);
  std::string dims = header.substr(open + 1, close - open - 1);
  for (size_t at = 0; at < dims.size();) {
    const size_t comma = dims.find(',', at);
    const std::string dim = dims.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (dim.find_first_of("0123456789") != std::string::npos) out.shape.push_back(std::stoll(dim));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  const size_t data = 10 + header_length;
  out.values.resize((bytes.size() - data) / sizeof(float));
  std::memcpy(out.values.data(), bytes.data() + data, out.values.size() * sizeof(float));
  return out;
}

nlohmann::json inspect_onnx(const std::string& path, const std::string& extra) {
  const CommandResult result = run_splitscope("inspect " + path + " --json " + extra);
  EXPECT_EQ(result.exit_code, 0) << path << ": " << result.err;
  if (result.exit_code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(result.out);
}

}  // namespace splitscope::testing
