#include "util/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "util/errors.hpp"

namespace splitscope {

void write_file_atomically(const std::string& path, std::string_view content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    throw InputError(path, "", "the folder " + folder.string() + " does not exist; create it first");
  }
  const fs::path temporary = folder / ("." + target.filename().string() + ".partial");
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw InputError(path, "", std::string("cannot write here: ") + std::strerror(errno));
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(temporary, ec);
      throw RunError("writing " + path + " failed: " + std::strerror(errno));
    }
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw RunError("cannot move the finished file into place at " + path + ": " + ec.message());
  }
}

}  // namespace splitscope
