#include "cli/network_loading.hpp"

#include <cctype>
#include <filesystem>
#include <iostream>

#include "ir/lower.hpp"
#include "ir/model_limits.hpp"
#include "ir/model_parser.hpp"
#include "ir/zoo.hpp"
#include "util/errors.hpp"
#include "splitscope_config.h"

#if SPLITSCOPE_HAVE_ONNX
#include "onnx/onnx_import.hpp"
#endif

namespace splitscope::cli {

bool is_onnx_path(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension == ".onnx";
}

Model load_onnx_network(const std::string& path, std::optional<int64_t> batch) {
#if SPLITSCOPE_HAVE_ONNX
  OnnxModel imported = import_onnx_model(path, batch);
  check_model_limits(imported.model, batch ? "--batch" : "");
  // Which nodes became one layer, so that a user can check the mapping (docs/onnx.md, "Patterns").
  for (const std::string& note : imported.pattern_notes) std::cerr << "note: " << path << ": " << note << "\n";
  if (!imported.weights_note.empty()) {
    // Said, not refused: every command but a run's output check works the same on splitscope's own weights.
    std::cerr << "note: " << path << ": " << imported.weights_note
              << "; runs use splitscope's own weights for the whole network, so outputs are not the framework's "
                 "(docs/onnx.md, \"Weights\")\n";
  }
  return std::move(imported.model);
#else
  (void)batch;
  throw UnavailableError(path + ": this build reads no ONNX files; install Debian's libonnx-dev and "
                         "libprotobuf-dev (scripts/setup does) and build again");
#endif
}

std::shared_ptr<const Graph> load_network(const std::string& name_or_path,
                                          std::optional<int64_t> batch) {
  const std::string path = resolve_zoo_file(ZooShelf::kNetworks, name_or_path);
  if (is_onnx_path(path)) return std::make_shared<const Graph>(lower(load_onnx_network(path, batch)));
  Model model = load_model_file(path);
  if (batch) {
    if (*batch <= 0) throw InputError("--batch", "", "must be positive, got " + std::to_string(*batch));
    model.batch = *batch;
    check_model_limits(model, "--batch");
  }
  return std::make_shared<const Graph>(lower(model));
}

std::string input_file(ZooShelf shelf, const std::string& name_or_path) {
  if (name_or_path.empty()) return "";
  try {
    return resolve_zoo_file(shelf, name_or_path);
  } catch (const InputError&) {
    return "";
  }
}

}  // namespace splitscope::cli
