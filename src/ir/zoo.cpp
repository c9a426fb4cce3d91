#include "ir/zoo.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "splitscope_config.h"
#include "util/errors.hpp"

namespace splitscope {
namespace {

namespace fs = std::filesystem;

const char* shelf_folder(ZooShelf shelf) {
  switch (shelf) {
    case ZooShelf::kNetworks: return "networks";
    case ZooShelf::kMachines: return "machines";
    case ZooShelf::kRules: break;
  }
  return "rules";
}

}  // namespace

std::vector<std::string> zoo_roots() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("SPLITSCOPE_MODELS"); env != nullptr && *env != '\0') {
    candidates.emplace_back(env);
  }
  candidates.emplace_back(SPLITSCOPE_MODELS_DIR);
  candidates.emplace_back("models");
  std::vector<std::string> roots;
  std::error_code ec;
  for (const auto& candidate : candidates) {
    if (fs::is_directory(candidate, ec) &&
        std::find(roots.begin(), roots.end(), candidate) == roots.end()) {
      roots.push_back(candidate);
    }
  }
  return roots;
}

std::vector<std::string> zoo_names(ZooShelf shelf) {
  std::error_code ec;
  for (const auto& root : zoo_roots()) {
    const fs::path folder = fs::path(root) / shelf_folder(shelf);
    if (!fs::is_directory(folder, ec)) continue;
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      if (entry.path().extension() != ".json") continue;
      const std::string stem = entry.path().stem().string();
      if (!stem.ends_with(".calibration")) names.push_back(stem);
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  return {};
}

std::string resolve_zoo_file(ZooShelf shelf, const std::string& name_or_path) {
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
  const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                               fs::path(name_or_path).extension() == ".json";
  if (!looks_like_path) {
    for (const auto& root : zoo_roots()) {
      const fs::path file = fs::path(root) / shelf_folder(shelf) / (name_or_path + ".json");
      if (fs::is_regular_file(file, ec)) return file.string();
    }
  }
  if (fs::is_directory(name_or_path, ec)) throw InputError(name_or_path, "", "is a folder; give a JSON file");
  if (fs::exists(name_or_path, ec)) return name_or_path;  // a pipe, e.g. <(generate-network)
  std::string known;
  for (const auto& name : zoo_names(shelf)) known += (known.empty() ? "" : ", ") + name;
  const std::string what = shelf == ZooShelf::kNetworks   ? "network"
                           : shelf == ZooShelf::kMachines ? "machine"
                                                          : "rules file";
  throw InputError(name_or_path, "",
                   looks_like_path
                       ? "no such file"
                       : "no such file, and no " + what + " of that name in the zoo; known " + what +
                             "s: " + (known.empty() ? "(none found)" : known));
}

}  // namespace splitscope
