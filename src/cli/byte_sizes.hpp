#pragma once
/// \file
/// Byte sizes on the command line, as nccl-tests takes them: "8", "1K",
/// "64M", "1G" (K, M, G: powers of 1024), or a range "MIN:MAX" of every
/// doubling from MIN up to MAX; a comma list of those is split by the
/// option itself (CLI11's delimiter, as every list option here).

#include <cstdint>
#include <string>
#include <vector>

namespace splitscope::cli {

/// The sizes `parts` name, in order; InputError naming `option` for a part
/// that is not one of the forms above, a size below 1 or above 2^40, a
/// range whose MIN is above its MAX, or no part at all.
std::vector<int64_t> parse_byte_sizes(const std::vector<std::string>& parts, const std::string& option);

}  // namespace splitscope::cli
