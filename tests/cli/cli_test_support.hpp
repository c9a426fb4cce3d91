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
/// Runs `LAUNCHER splitscope ARGS` (e.g. LAUNCHER = "mpirun -np 2").
CommandResult run_splitscope_under(const std::string& launcher, const std::string& args);
/// Runs `EXECUTABLE ARGS`: a copy of splitscope elsewhere, say.
CommandResult run_executable(const std::string& executable, const std::string& args);
/// $SPLITSCOPE_BIN, the built `splitscope`.
std::string splitscope_path();

/// A fresh, empty folder for one test's files.
std::string fresh_temp_dir(const std::string& name);

/// The whole content of a file ("" if missing).
std::string read_text_file(const std::string& path);

}  // namespace splitscope::testing

namespace splitscope::testing {

/// Runs a script of the source tree (scripts/NAME ARGS) and returns its exit code.
int run_script(const std::string& name, const std::string& args);

/// Exit code scripts use for "skipped: a tool is missing" (meson's convention).
inline constexpr int kSkipExitCode = 77;

}  // namespace splitscope::testing
