#pragma once
/// \file
/// The whole `splitscope` command as a function: main() calls it, and so does
/// the command-line fuzzer (fuzz/cli_fuzzer.cpp), which must not exit the
/// process; the Python module (python/, docs/python.md) runs its commands
/// through run_command_line, which throws what run_cli prints.

#include <optional>
#include <stdexcept>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace splitscope::cli {

/// Parses the command line, runs the command and turns every error into one
/// `error: ...` line on stderr; returns the exit code (docs/reports.md: 0 done,
/// 1 failure, 2 bad input, 3 unavailable). Never calls exit().
int run_cli(int argc, char** argv);

/// run_cli without the printing of errors: a command line that does not
/// parse throws CommandLineError (exit 2), and the command's own errors
/// (util/errors.hpp: InputError, UnavailableError, RunError, ...) pass
/// through. Returns the command's exit code; help and --version print and return 0.
int run_command_line(int argc, char** argv);

/// Parses `argv` into `app` as run_cli parses the `splitscope` command line
/// (CommandLineError for one that does not parse); returns the exit code
/// where it asked for help or the version (printed), nullopt where the
/// command is to run. `sweep` parses each of its points' `run` with it.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

/// A command line that names no command, an unknown one, or options that do
/// not parse: bad input (exit 2). what() is the text after `error: `.
class CommandLineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// How a command failed: its exit code and the text run_cli prints after `error: `.
struct CommandFailure {
  int exit_code = 1;
  std::string message;
};

/// The failure the exception being handled stands for (call it inside a
/// catch block): run_cli's mapping of exceptions to exit codes, for callers
/// of run_command_line. Rethrows an exception that is no std::exception.
CommandFailure current_command_failure();

}  // namespace splitscope::cli
