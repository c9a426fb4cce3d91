#pragma once
/// \file
/// Input files as JSON text: read with a size limit, parsed with every
/// problem said as `<file>: <json path>: <problem>` (InputError, exit 2):
/// invalid JSON, a number past double's range (`batch: '1e999' is too large
/// a number`), and a key given twice in one object, which nlohmann would
/// silently resolve to the last.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace splitscope {

/// Parses an input file's text; InputError `<source>: not valid JSON: ...`,
/// `<source>: <path>: appears twice in the same object; keep one`, or
/// `<source>: <path>: '1e999' is too large a number (...)` otherwise.
nlohmann::json parse_json_text(std::string_view text, const std::string& source);

/// The most read_input_file reads: the zoo's largest file is a few hundred
/// KiB, and a calibration of every op shape a few MiB.
inline constexpr size_t kMaxInputFileBytes = size_t{64} << 20;

/// The whole content of an input file; InputError `<path>: cannot open the
/// file`, or naming the limit when it holds more than kMaxInputFileBytes.
std::string read_input_file(const std::string& path);

}  // namespace splitscope
