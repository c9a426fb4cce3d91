#pragma once
/// \file
/// Where and how a report was made, as Google Benchmark's JSON `context`
/// block: date, host, executable, splitscope's version, git revision and
/// build type, and the command line, so that a report file says how to
/// reproduce it.

#include <string>
#include <vector>

namespace splitscope {

struct ReportContext {
  std::string date;          ///< local time, ISO 8601 with its UTC offset
  std::string host;
  std::string executable;    ///< absolute path when it can be found
  std::string version;       ///< splitscope's
  std::string git_revision;  ///< `git describe --always --dirty` of the build
  std::string build_type;    ///< meson's buildtype
  bool cuda_built = false;   ///< whether this build has the CUDA backend
  int cpus = 0;              ///< hardware threads
  std::vector<std::string> command_line;
};

/// The context of this process, started as `args` (argv).
ReportContext make_report_context(std::vector<std::string> args);

/// The command line as one shell-quoted string.
std::string quoted_command_line(const std::vector<std::string>& args);

}  // namespace splitscope
