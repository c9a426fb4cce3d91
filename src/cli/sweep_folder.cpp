#include "cli/sweep_folder.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>

#include "util/errors.hpp"

namespace splitscope::cli {
namespace {

namespace fs = std::filesystem;

// The one piece of process-wide state: a signal handler can reach nothing
// else. The folder's path while a sweep runs, "" otherwise. A process runs
// one sweep at a time (a sweep's points are `run`s, never sweeps).
std::array<char, 4096> folder_to_remove{};

// Removes the folder's files and the folder with system calls only: a
// signal may arrive anywhere, inside malloc too (getdents64 rather than
// opendir, which allocates).
void remove_folder_now(const char* folder) {
  const int fd = ::open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) std::array<char, 8192> buffer{};
    for (long got; (got = ::syscall(SYS_getdents64, fd, buffer.data(), buffer.size())) > 0;) {
      for (long at = 0; at < got;) {
        // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name
        unsigned short length = 0;
        std::memcpy(&length, buffer.data() + at + 16, sizeof(length));
        const char* name = buffer.data() + at + 19;
        if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) ::unlinkat(fd, name, 0);
        at += length;
      }
    }
    ::close(fd);
  }
  ::rmdir(folder);
}

extern "C" void remove_folder_and_stop(int signal_number) {
  if (folder_to_remove[0] != '\0') remove_folder_now(folder_to_remove.data());
  // Then stop as the signal would have stopped us (the shell sees 130 or 143).
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

fs::path temp_folder() {
  std::error_code error;
  const fs::path folder = fs::temp_directory_path(error);
  if (!error) return folder;
  const char* tmpdir = std::getenv("TMPDIR");
  throw InputError("TMPDIR", "",
                   fmt::format("{} is not a folder (sweep keeps each point's report there until it has read it); "
                               "set TMPDIR to an existing folder you can write, or unset it",
                               tmpdir != nullptr ? tmpdir : ""));
}

}  // namespace

SweepFolder::SweepFolder() {
  path_ = temp_folder() / fmt::format("splitscope-sweep-{}", ::getpid());
  std::error_code error;
  fs::create_directories(path_, error);
  if (error) {
    throw InputError("TMPDIR", "",
                     fmt::format("cannot create {} ({}); set TMPDIR to a folder you can write", path_.string(),
                                 error.message()));
  }
  const std::string text = path_.string();
  if (text.size() < folder_to_remove.size()) std::memcpy(folder_to_remove.data(), text.c_str(), text.size() + 1);
  struct sigaction action {};
  action.sa_handler = remove_folder_and_stop;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &previous_interrupt_);
  ::sigaction(SIGTERM, &action, &previous_terminate_);
}

SweepFolder::~SweepFolder() {
  ::sigaction(SIGINT, &previous_interrupt_, nullptr);
  ::sigaction(SIGTERM, &previous_terminate_, nullptr);
  folder_to_remove[0] = '\0';
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

}  // namespace splitscope::cli
