#include "cli_test_support.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace splitscope::testing {

CommandResult run_splitscope(const std::string& args) { return run_splitscope_under("", args); }

std::string splitscope_path() {
  const char* bin = std::getenv("SPLITSCOPE_BIN");
  if (bin == nullptr) throw std::runtime_error("SPLITSCOPE_BIN is not set; run the tests with meson test");
  return bin;
}

CommandResult run_splitscope_under(const std::string& launcher, const std::string& args) {
  return run_executable((launcher.empty() ? "" : launcher + " ") + splitscope_path(), args);
}

CommandResult run_executable(const std::string& executable, const std::string& args) {
  const std::string err_path = fresh_temp_dir("stderr") + "/err.txt";
  const std::string command = executable + " " + args + " 2>" + err_path;
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed for " + command);
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_text_file(err_path);
  return result;
}

std::string fresh_temp_dir(const std::string& name) {
  namespace fs = std::filesystem;
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() /
                       ("splitscope-test-" + std::to_string(::getpid()) + "-" + name + "-" +
                        std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace splitscope::testing

namespace splitscope::testing {

int run_script(const std::string& name, const std::string& args) {
  const char* root = std::getenv("SPLITSCOPE_SOURCE_ROOT");
  if (root == nullptr) throw std::runtime_error("SPLITSCOPE_SOURCE_ROOT is not set; run the tests with meson test");
  const std::string command = std::string(root) + "/scripts/" + name + " " + args + " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace splitscope::testing
