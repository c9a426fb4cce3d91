#include "report/report_context.hpp"

#include <unistd.h>

#include <array>
#include <cctype>
#include <ctime>
#include <filesystem>
#include <string_view>
#include <thread>

#include "git_revision.h"
#include "splitscope_config.h"

namespace splitscope {
namespace {

std::string local_time_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::array<char, 64> text{};
  const size_t length = std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%S%z", &local);
  return {text.data(), length};
}

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown";
  return name.data();
}

std::string executable_path(const std::vector<std::string>& args) {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) return self.string();
  return args.empty() ? std::string() : args.front();
}

bool needs_quotes(const std::string& arg) {
  if (arg.empty()) return true;
  for (char c : arg) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) != 0 ||
                       std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
    if (!plain) return true;
  }
  return false;
}

}  // namespace

ReportContext make_report_context(std::vector<std::string> args) {
  ReportContext context;
  context.date = local_time_iso8601();
  context.host = host_name();
  context.executable = executable_path(args);
  context.version = SPLITSCOPE_VERSION;
  context.git_revision = SPLITSCOPE_GIT_REVISION;
  context.build_type = SPLITSCOPE_BUILD_TYPE;
  context.cuda_built = SPLITSCOPE_HAVE_CUDA != 0;
  context.cpus = static_cast<int>(std::thread::hardware_concurrency());
  context.command_line = std::move(args);
  return context;
}

std::string quoted_command_line(const std::vector<std::string>& args) {
  std::string line;
  for (const std::string& arg : args) {
    if (!line.empty()) line += ' ';
    if (!needs_quotes(arg)) {
      line += arg;
      continue;
    }
    line += '\'';
    for (char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace splitscope
