#pragma once
// Folders and files for the util tests.

#include <string>
#include <vector>

namespace splitscope::testing {

/// A fresh, empty folder for one test's files (removed when every test passed).
std::string fresh_util_dir(const std::string& name);

/// The whole content of a file ("" if missing).
std::string file_text(const std::string& path);

/// The names of a folder's entries, sorted.
std::vector<std::string> folder_entries(const std::string& folder);

}  // namespace splitscope::testing
