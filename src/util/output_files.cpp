#include "util/output_files.hpp"

#include <filesystem>

#include "util/errors.hpp"

namespace splitscope {
namespace {

namespace fs = std::filesystem;

// The file a path ends up naming, links followed, for telling two spellings
// apart. Made absolute first: weakly_canonical leaves a relative path whose
// first part does not exist relative (and `..` unresolved past it).
fs::path resolved(const std::string& path) {
  std::error_code error;
  const fs::path absolute = fs::absolute(fs::path(path), error);
  if (error) return fs::path(path).lexically_normal();
  fs::path canonical = fs::weakly_canonical(absolute, error);
  return error ? absolute.lexically_normal() : canonical;
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

// Whether `place` lies inside `folder` (both resolved).
bool inside(const fs::path& place, const fs::path& folder) {
  const fs::path relative = place.lexically_relative(folder);
  return !relative.empty() && *relative.begin() != "..";
}

void check_not_an_input(const OutputFile& output, const fs::path& place, const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    std::error_code error;
    if (input.empty() || !fs::is_regular_file(input, error) || resolved(input) != place) continue;
    const std::string which = input == output.path ? output.path : output.path + " is " + input + ", which";
    throw InputError(output.option, "",
                     which + " is an input of this command; writing there would destroy it: give another file name");
  }
}

void check_not_kept(const OutputFile& output, const fs::path& place, const KeptFiles& kept) {
  std::error_code error;
  if (!fs::is_regular_file(place, error)) return;  // a new file may join a folder of the zoo (calibrate --out)
  for (const std::string& folder : kept.folders) {
    if (folder.empty() || !inside(place, resolved(folder))) continue;
    throw InputError(output.option, "",
                     (output.path == place.string() ? output.path + " is" : output.path + " names " + place.string() + ",") +
                         " a file of the zoo in " + folder +
                         "; writing there would replace it: give a file name outside " + folder +
                         (kept.force_option.empty() ? "" : ", or add " + kept.force_option + " to replace it"));
  }
}

}  // namespace

void check_output_files(const std::vector<OutputFile>& outputs, const KeptFiles& kept) {
  std::vector<std::pair<const OutputFile*, fs::path>> seen;
  for (const OutputFile& output : outputs) {
    if (output.path.empty()) continue;
    check_writable_place(output);
    const fs::path place = resolved(output.path);
    check_not_an_input(output, place, kept.inputs);
    check_not_kept(output, place, kept);
    for (const auto& [other, other_place] : seen) {
      if (other_place != place || place == "/dev/null") continue;
      const std::string which = other->path == output.path ? output.path : output.path + " (" + other->path + ")";
      throw InputError(output.option, "", which + " is also the file of " + other->option +
                                              "; give each output its own file");
    }
    seen.emplace_back(&output, place);
  }
}

}  // namespace splitscope
