#include "util/output_files.hpp"

#include <filesystem>

#include "util/errors.hpp"

namespace splitscope {
namespace {

namespace fs = std::filesystem;

// The file a path ends up naming, links followed, for telling two spellings apart.
fs::path resolved(const std::string& path) {
  std::error_code error;
  fs::path canonical = fs::weakly_canonical(fs::path(path), error);
  return error ? fs::absolute(fs::path(path)).lexically_normal() : canonical;
}

void check_writable_place(const OutputFile& output) {
  const fs::path target(output.path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    throw InputError(output.option, "",
                     "cannot write " + output.path + ": the folder " + folder.string() + " does not exist; create it first");
  }
  if (fs::is_directory(target, error)) throw InputError(output.option, "", output.path + " is a folder; give a file name");
}

}  // namespace

void check_output_files(const std::vector<OutputFile>& outputs, const std::vector<std::string>& inputs) {
  std::vector<std::pair<const OutputFile*, fs::path>> seen;
  for (const OutputFile& output : outputs) {
    if (output.path.empty()) continue;
    check_writable_place(output);
    const fs::path place = resolved(output.path);
    for (const std::string& input : inputs) {
      std::error_code error;
      if (!input.empty() && fs::is_regular_file(input, error) && resolved(input) == place) {
        throw InputError(output.option, "", output.path + " is an input of this command; writing there would "
                                                          "destroy it: give another file name");
      }
    }
    for (const auto& [other, other_place] : seen) {
      if (other_place == place && place.string() != "/dev/null") {
        throw InputError(output.option, "",
                         output.path + " is also the file of " + other->option + "; give each output its own file");
      }
    }
    seen.emplace_back(&output, place);
  }
}

}  // namespace splitscope
