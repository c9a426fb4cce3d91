#pragma once
/// \file
/// Byte sizes on the command line, as nccl-tests takes them: "8", "1K",
/// "64M", "1G" (K, M, G: powers of 1024), a comma list of those, or a range
/// "MIN:MAX" of every doubling from MIN up to MAX.

#include <cstdint>
#include <string>
#include <vector>

namespace splitscope::cli {

/// The sizes `text` names, in order; InputError naming `option` for text
/// that is not one of the forms above, a size below 1 or above 2^40, or a
/// range whose MIN is above its MAX.
std::vector<int64_t> parse_byte_sizes(const std::string& text, const std::string& option);

}  // namespace splitscope::cli
