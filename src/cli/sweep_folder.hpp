#pragma once
/// \file
/// The folder where `sweep` keeps each point's run report until it has read
/// it ($TMPDIR/splitscope-sweep-PID): removed when the sweep ends, fails, or
/// is stopped by Ctrl-C or SIGTERM, so that no point-*.json is left behind.

#include <csignal>
#include <filesystem>

namespace splitscope::cli {

class SweepFolder {
 public:
  /// Creates the folder. InputError naming TMPDIR when it is not a folder
  /// that can be written.
  SweepFolder();
  /// Removes the folder and puts the signal handlers back.
  ~SweepFolder();
  SweepFolder(const SweepFolder&) = delete;
  SweepFolder& operator=(const SweepFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  struct sigaction previous_interrupt_ {};
  struct sigaction previous_terminate_ {};
};

}  // namespace splitscope::cli
