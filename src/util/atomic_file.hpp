#pragma once
/// \file
/// Writes an output file all at once: the content goes to a temporary file in
/// the same folder, which is renamed over the target only when complete, so a
/// failed run never leaves a partial report, trace or .npy behind.

#include <string>
#include <string_view>

namespace splitscope {

/// Writes `content` to `path` atomically. Throws InputError naming the path
/// when the folder does not exist or is not writable.
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace splitscope
