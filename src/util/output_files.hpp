#pragma once
/// \file
/// The files a command will write, checked before it does any work: a long
/// run that fails at its very end because `--report` named a missing folder
/// wastes the user's time, and one that overwrites its own network file
/// destroys their input.

#include <string>
#include <vector>

namespace splitscope {

/// One file a command writes, with the option that asked for it.
struct OutputFile {
  std::string option;  ///< e.g. "--report"
  std::string path;    ///< empty: not asked for
};

/// InputError (exit 2) naming the option when an output cannot be written as
/// asked: its folder does not exist, it is a folder, two outputs name the same
/// file, or it names a file in `inputs` (files the command reads; names that
/// are not existing files, like zoo names, are ignored).
void check_output_files(const std::vector<OutputFile>& outputs, const std::vector<std::string>& inputs = {});

}  // namespace splitscope
