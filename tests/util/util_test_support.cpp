#include "util_test_support.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace splitscope::testing {
namespace {

namespace fs = std::filesystem;

fs::path temp_root() { return fs::temp_directory_path() / ("splitscope-util-test-" + std::to_string(::getpid())); }

/// Removes this process's test folders when the tests end (kept when one failed, to look at).
class TempCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    if (::testing::UnitTest::GetInstance()->Passed()) fs::remove_all(temp_root());
  }
};

[[maybe_unused]] const ::testing::Environment* const kTempCleanup =
    ::testing::AddGlobalTestEnvironment(new TempCleanup);

}  // namespace

std::string fresh_util_dir(const std::string& name) {
  const fs::path dir = temp_root() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> folder_entries(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace splitscope::testing
