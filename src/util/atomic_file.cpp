#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "util/errors.hpp"

namespace splitscope {

namespace {

namespace fs = std::filesystem;

// A device or pipe, written in place.
void write_in_place(const fs::path& file, const std::string& path, std::string_view content) {
  std::ofstream out(file, std::ios::binary);
  if (!out) throw InputError(path, "", std::string("cannot write here: ") + std::strerror(errno));
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.flush();
  if (!out) throw RunError("writing " + path + " failed: " + std::strerror(errno));
}

// The permissions a new file gets (0666 less the umask), read without
// umask(2), which would change the process's mask while other threads create
// files. An existing target keeps its own.
mode_t new_file_mode(const fs::path& target) {
  struct stat existing {};
  if (::stat(target.c_str(), &existing) == 0) return existing.st_mode & 07777;
  mode_t mask = 022;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Umask:", 0) == 0) mask = static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  }
  return 0666 & ~mask;
}

/// Writes to a file descriptor through a buffer, keeping the first error:
/// the producer cannot be stopped midway, so later pieces are dropped and
/// the error reported once it is done.
class BufferedFd {
 public:
  explicit BufferedFd(int fd) : fd_(fd) { buffer_.reserve(kBufferBytes); }

  void put(std::string_view piece) {
    if (error_ != 0) return;
    if (buffer_.size() + piece.size() > kBufferBytes) flush();
    if (piece.size() >= kBufferBytes) {
      write_all(piece);
    } else {
      buffer_.append(piece);
    }
  }
  /// Flushes and returns the first error (0: none).
  int finish() {
    flush();
    return error_;
  }
  void fail(int error) {
    if (error_ == 0) error_ = error;
  }

 private:
  static constexpr size_t kBufferBytes = size_t{1} << 20;

  void flush() {
    write_all(buffer_);
    buffer_.clear();
  }
  void write_all(std::string_view bytes) {
    for (size_t done = 0; error_ == 0 && done < bytes.size();) {
      const ssize_t wrote = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) error_ = wrote < 0 ? errno : EIO;
      if (wrote > 0) done += static_cast<size_t>(wrote);
    }
  }

  int fd_;
  int error_ = 0;
  std::string buffer_;
};

// Creates a temporary of a name no other writer has (mkstemp) beside
// `target`, writes what `write` produces to it and returns its name: two
// commands writing one report at once each publish a whole file of their
// own, never one temporary written by both.
std::string write_temporary(const fs::path& target, const fs::path& folder, const std::string& path,
                            const ContentWriter& write) {
  std::string name = (folder / ("." + target.filename().string() + ".partial-XXXXXX")).string();
  std::vector<char> buffer(name.begin(), name.end());
  buffer.push_back('\0');
  const int fd = ::mkstemp(buffer.data());
  if (fd < 0) throw InputError(path, "", std::string("cannot write here: ") + std::strerror(errno));
  name = buffer.data();
  BufferedFd out(fd);
  if (::fchmod(fd, new_file_mode(target)) != 0) out.fail(errno);
  try {
    write([&out](std::string_view piece) { out.put(piece); });
  } catch (...) {
    ::close(fd);
    ::unlink(name.c_str());
    throw;
  }
  int error = out.finish();
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    ::unlink(name.c_str());
    throw RunError("writing " + path + " failed: " + std::strerror(error));
  }
  return name;
}

}  // namespace

StagedFile::StagedFile(std::string path, std::string_view content) : path_(std::move(path)) {
  stage([content](const std::function<void(std::string_view)>& put) { put(content); });
}

StagedFile::StagedFile(std::string path, const ContentWriter& write) : path_(std::move(path)) { stage(write); }

void StagedFile::stage(const ContentWriter& write) {
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
    write([this](std::string_view piece) { content_.append(piece); });
    return;
  }
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec)) {
    throw InputError(path_, "", "the folder " + folder.string() + " does not exist; create it first");
  }
  temporary_ = write_temporary(target, folder, path_, write);
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
    write_in_place(target_, path_, content_);
    content_.clear();
    return;
  }
  if (temporary_.empty()) return;  // published already
  std::error_code ec;
  fs::rename(temporary_, target_, ec);  // rename(2): readers see the old file or the new, never a mix
  if (ec) {
    fs::remove(temporary_, ec);
    temporary_.clear();
    throw RunError("cannot move the finished file into place at " + path_ + ": " + ec.message());
  }
  temporary_.clear();
}

void write_file_atomically(const std::string& path, std::string_view content) { StagedFile(path, content).publish(); }

}  // namespace splitscope
