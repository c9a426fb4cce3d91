// The Python module's one door into splitscope (docs/python.md): a command
// line run in this process exactly as the `splitscope` executable runs it,
// as `sweep` runs each of its points. The Python side (__init__.py) turns
// calls into command lines and the command's JSON into Python objects, so
// the module's results are the command's own and no logic of a command is
// written twice.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/run_cli.hpp"

namespace py = pybind11;

namespace {

/// std::cout is the process's: one command at a time may take it over.
std::mutex python_command_mutex;

/// Puts std::cout back however the command ends.
class CapturedStandardOutput {
 public:
  explicit CapturedStandardOutput(std::ostringstream& into) : saved_(std::cout.rdbuf(into.rdbuf())) {}
  ~CapturedStandardOutput() { std::cout.rdbuf(saved_); }
  CapturedStandardOutput(const CapturedStandardOutput&) = delete;
  CapturedStandardOutput& operator=(const CapturedStandardOutput&) = delete;

 private:
  std::streambuf* saved_;
};

/// (exit code, what the command printed on stdout, error message or "").
/// Runs without the GIL: a simulation or a cpu run may take minutes, and
/// the caller's other Python threads go on meanwhile.
std::tuple<int, std::string, std::string> run_python_command(const std::vector<std::string>& arguments) {
  py::gil_scoped_release released;
  std::lock_guard<std::mutex> one_at_a_time(python_command_mutex);
  std::vector<std::string> words{"splitscope"};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::ostringstream printed;
  try {
    CapturedStandardOutput captured(printed);
    const int status = splitscope::cli::run_command_line(static_cast<int>(words.size()), argv.data());
    return {status, printed.str(), ""};
  } catch (const std::exception&) {
    const splitscope::cli::CommandFailure failure = splitscope::cli::current_command_failure();
    return {failure.exit_code, printed.str(), failure.message};
  } catch (...) {
    return {1, printed.str(), "an unknown error stopped the command"};
  }
}

}  // namespace

PYBIND11_MODULE(_native, module) {
  module.doc() = "splitscope's commands run in this process (use the splitscope package, not this module)";
  module.def("run_command", &run_python_command, py::arg("arguments"),
             "Runs `splitscope ARGUMENTS...`; returns (exit code, standard output, error message).");
}
