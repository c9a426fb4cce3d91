#pragma once
/// \file
/// The output files of one command, published together: each is written to a
/// temporary as soon as it is ready, and all are moved into place only once
/// every one was written, so that `--report r.json --trace /dev/full` fails
/// with no r.json left behind (issue 19).
///
/// Typical use:
///   OutputBatch files;
///   files.add("--report", options.report, report_json);  // written to a temporary now
///   files.add("--trace", options.trace, trace_json);
///   files.publish();                                      // all, or none
/// Temporaries still unpublished when the batch is destroyed (an exception
/// on the way) are removed.

#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "util/atomic_file.hpp"

namespace splitscope {

class OutputBatch {
 public:
  /// `writes` false: a batch that writes nothing (each rank of an MPI launch
  /// but rank 0 makes the same files, and only rank 0 may write them).
  explicit OutputBatch(bool writes = true) : writes_(writes) {}

  /// Writes `content` for `path` (asked for by `option`, e.g. "--report") to
  /// its temporary. A failure is rethrown with the option in front:
  /// "--trace: writing /dev/full failed: ...". An empty path is skipped.
  void add(const std::string& option, const std::string& path, std::string_view content);
  /// The same, the content streamed to the temporary by `write` as it is made.
  void add(const std::string& option, const std::string& path, const ContentWriter& write);
  /// Publishes every file: devices and pipes written in place first (the
  /// step that can fail: nothing is renamed then), then the renames.
  /// Returns "PATH (OPTION)" for each file renamed into place, for the
  /// command to say what it wrote (devices and pipes are not listed: what
  /// went to /dev/stdout is already on screen).
  std::vector<std::string> publish();

 private:
  struct Entry {
    std::string option;
    StagedFile file;
  };
  /// Rethrows `error` of `option`'s file with the option in front; `others`:
  /// other files were asked for, and none of them will be written now.
  [[noreturn]] void fail(const std::string& option, const std::exception& error, bool others) const;

  bool writes_ = true;
  std::vector<Entry> entries_;
};

}  // namespace splitscope
