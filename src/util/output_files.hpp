#pragma once
/// \file
/// The files a command will write, checked before it does any work: a long
/// run that fails at its very end because `--report` named a missing folder
/// wastes the user's time, and one that overwrites its own network file
/// destroys their input. Commands reach this through one wrapper
/// (cli/command_outputs.hpp), which adds the zoo's folders to `kept`.

#include <string>
#include <vector>

namespace splitscope {

/// One file a command writes, with the option that asked for it.
struct OutputFile {
  std::string option;  ///< e.g. "--report"
  std::string path;    ///< empty: not asked for
};

/// What no output may replace.
struct KeptFiles {
  /// Files the command reads (names that are not existing files, like zoo
  /// names or "", are ignored).
  std::vector<std::string> inputs;
  /// Folders none of whose existing files (at any depth) may be replaced:
  /// the zoo's models/ folders.
  std::vector<std::string> folders;
  /// The option that allows replacing a file in `folders` (calibrate's
  /// "--force"), named in the message; "" when nothing allows it.
  std::string force_option;
};

/// InputError (exit 2) naming the option and both paths when an output cannot
/// be written as asked: its folder does not exist, it is a folder, two outputs
/// name the same file, or it names a file of `kept`. Paths are compared as the
/// files they name (absolute, `..` and links resolved), so `./r.json` and
/// `adir/../r.json` are one file.
void check_output_files(const std::vector<OutputFile>& outputs, const KeptFiles& kept = {});

}  // namespace splitscope
