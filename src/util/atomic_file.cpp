#include "util/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "util/errors.hpp"

namespace splitscope {

namespace {

namespace fs = std::filesystem;

// A device or pipe (/dev/null, /dev/stdout, a fifo) cannot be replaced by a
// renamed file, and must not be: it is written in place.
void write_in_place(const fs::path& target, const std::string& path, std::string_view content) {
  std::ofstream out(target, std::ios::binary);
  if (!out) throw InputError(path, "", std::string("cannot write here: ") + std::strerror(errno));
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.flush();
  if (!out) throw RunError("writing " + path + " failed: " + std::strerror(errno));
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view content) {
  fs::path target(path);
  std::error_code ec;
  // Through a link to the file it names: renaming over the link would replace the link itself.
  for (int hops = 0; hops < 40 && fs::is_symlink(target, ec); ++hops) {  // 40: Linux's own limit on a chain
    const fs::path link = fs::read_symlink(target, ec);
    if (ec) break;
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  const fs::file_status status = fs::status(target, ec);
  if (fs::is_directory(status)) throw InputError(path, "", "is a folder; give a file name");
  if (fs::exists(status) && !fs::is_regular_file(status)) return write_in_place(target, path, content);

  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
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
      const std::string reason = std::strerror(errno);
      out.close();
      fs::remove(temporary, ec);
      throw RunError("writing " + path + " failed: " + reason);
    }
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    const std::string reason = ec.message();  // before remove() overwrites ec
    fs::remove(temporary, ec);
    throw RunError("cannot move the finished file into place at " + path + ": " + reason);
  }
}

}  // namespace splitscope
