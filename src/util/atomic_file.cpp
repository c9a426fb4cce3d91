#include "util/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include "util/errors.hpp"

namespace splitscope {

namespace {

namespace fs = std::filesystem;

void write_to(const fs::path& file, const std::string& path, std::string_view content, bool truncate) {
  std::ofstream out(file, truncate ? std::ios::binary | std::ios::trunc : std::ios::binary);
  if (!out) throw InputError(path, "", std::string("cannot write here: ") + std::strerror(errno));
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.flush();
  if (!out) throw RunError("writing " + path + " failed: " + std::strerror(errno));
}

}  // namespace

StagedFile::StagedFile(std::string path, std::string_view content) : path_(std::move(path)) {
  fs::path target(path_);
  std::error_code ec;
  // Through a link to the file it names: renaming over the link would replace the link itself.
  for (int hops = 0; hops < 40 && fs::is_symlink(target, ec); ++hops) {  // 40: Linux's own limit on a chain
    const fs::path link = fs::read_symlink(target, ec);
    if (ec) break;
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  target_ = target.string();
  const fs::file_status status = fs::status(target, ec);
  if (fs::is_directory(status)) throw InputError(path_, "", "is a folder; give a file name");
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    in_place_ = true;
    content_ = std::string(content);
    return;
  }
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec)) {
    throw InputError(path_, "", "the folder " + folder.string() + " does not exist; create it first");
  }
  const fs::path temporary = folder / ("." + target.filename().string() + ".partial");
  temporary_ = temporary.string();
  try {
    write_to(temporary, path_, content, true);
  } catch (...) {
    fs::remove(temporary, ec);
    temporary_.clear();
    throw;
  }
}

StagedFile::StagedFile(StagedFile&& other) noexcept
    : path_(std::move(other.path_)),
      target_(std::move(other.target_)),
      temporary_(std::exchange(other.temporary_, std::string())),
      content_(std::move(other.content_)),
      in_place_(other.in_place_) {}

StagedFile::~StagedFile() {
  if (temporary_.empty()) return;
  std::error_code ec;
  fs::remove(temporary_, ec);
}

void StagedFile::publish() {
  if (in_place_) {
    write_to(target_, path_, content_, false);
    content_.clear();
    return;
  }
  if (temporary_.empty()) return;  // published already
  std::error_code ec;
  fs::rename(temporary_, target_, ec);
  if (ec) throw RunError("cannot move the finished file into place at " + path_ + ": " + ec.message());
  temporary_.clear();
}

void write_file_atomically(const std::string& path, std::string_view content) { StagedFile(path, content).publish(); }

}  // namespace splitscope
