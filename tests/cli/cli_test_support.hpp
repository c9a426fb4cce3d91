#pragma once
// Runs the built `splitscope` (path from $SPLITSCOPE_BIN) and captures what it prints.

#include <string>

namespace splitscope::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs `splitscope ARGS` through the shell; ARGS is appended as written.
CommandResult run_splitscope(const std::string& args);

/// A fresh, empty folder for one test's files.
std::string fresh_temp_dir(const std::string& name);

/// The whole content of a file ("" if missing).
std::string read_text_file(const std::string& path);

}  // namespace splitscope::testing
