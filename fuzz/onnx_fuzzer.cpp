// ONNX files (docs/onnx.md): read, checked, shape-inferred and mapped to a
// network, then lowered with its totals, as `splitscope inspect model.onnx`
// does. The importer reads a path (external weights are found beside it), so
// each input is written to one scratch file first.

#include <unistd.h>

#include <cstdio>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "ir/lower.hpp"
#include "onnx/onnx_import.hpp"

namespace {

const std::string& scratch_path() {
  static const std::string path = "/tmp/splitscope-onnx-fuzz-" + std::to_string(::getpid()) + ".onnx";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitscope;
  std::FILE* file = std::fopen(scratch_path().c_str(), "wb");
  if (file == nullptr) return 0;
  const bool written = std::fwrite(data, 1, size, file) == size;
  std::fclose(file);
  if (!written) return 0;
  fuzz::refusals_are_input_errors([&] {
    const Graph graph = lower(load_onnx_model(scratch_path(), 2));
    if (graph.total_params() + graph.total_flops() == -1) std::fprintf(stderr, "-1\n");  // keeps the work
  });
  std::remove(scratch_path().c_str());
  return 0;
}
