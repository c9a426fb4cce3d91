#pragma once
/// \file
/// Writes an output file all at once: the content goes to a temporary file in
/// the same folder, which is renamed over the target only when complete, so a
/// failed run never leaves a partial report, trace or .npy behind.

#include <functional>
#include <string>
#include <string_view>

namespace splitscope {

/// Produces a file's content piece by piece through `put`, so that a large
/// output (the trace of a 20,000-layer run) is written as it is made, never
/// held whole in memory (issue 54 item 17).
using ContentWriter = std::function<void(const std::function<void(std::string_view)>& put)>;

/// One output file written in two steps, so that several can be published
/// together (util/output_batch.hpp): the constructor writes the content to a
/// temporary beside the target, publish() renames it into place. A StagedFile
/// destroyed unpublished removes its temporary. A device or pipe target
/// (/dev/null, /dev/stdout, a fifo) cannot be replaced by a rename: its
/// content is kept and written in place by publish().
class StagedFile {
 public:
  /// Throws InputError naming the path when the folder does not exist or is
  /// not writable, RunError when the write fails (a full disk).
  StagedFile(std::string path, std::string_view content);
  /// The same, the content streamed to the temporary by `write` (a device or
  /// pipe target keeps it in memory, to be written by publish()). An
  /// exception from `write` removes the temporary and propagates.
  StagedFile(std::string path, const ContentWriter& write);
  ~StagedFile();
  StagedFile(StagedFile&& other) noexcept;
  StagedFile& operator=(StagedFile&&) = delete;
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  const std::string& path() const { return path_; }
  /// Whether publish() writes the target in place (a device or pipe), the
  /// only step of publishing that can fail for want of space.
  bool in_place() const { return in_place_; }
  /// Moves the finished file into place (or writes a device in place);
  /// RunError naming the path if that fails.
  void publish();

 private:
  void stage(const ContentWriter& write);

  std::string path_;       ///< as the user gave it
  std::string target_;     ///< the file it names, links followed
  std::string temporary_;  ///< "" once published or when in place
  std::string content_;    ///< in place only: written by publish()
  bool in_place_ = false;
};

/// Writes `content` to `path` atomically. Throws InputError naming the path
/// when the folder does not exist or is not writable.
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace splitscope
