#pragma once
/// \file
/// JSON text for output. Names are bytes, not necessarily UTF-8 (a file name
/// `out/bad\xff.json` on the recorded command line, a layer name read from a
/// file): nlohmann's dump() throws type_error.316 on such a byte after the
/// run is done, so every output goes through here, which writes U+FFFD in
/// its place instead.

#include <nlohmann/json.hpp>
#include <string>

namespace splitscope {

/// `value.dump(indent)`, with bytes that are not UTF-8 replaced by U+FFFD.
inline std::string dump_json(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace splitscope
