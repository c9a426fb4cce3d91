#include "cli/network_loading.hpp"

#include "ir/lower.hpp"
#include "ir/model_limits.hpp"
#include "ir/model_parser.hpp"
#include "ir/zoo.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {

std::shared_ptr<const Graph> load_network(const std::string& name_or_path,
                                          std::optional<int64_t> batch) {
  const std::string path = resolve_zoo_file(ZooShelf::kNetworks, name_or_path);
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
