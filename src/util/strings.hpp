#pragma once
/// \file
/// Small string helpers shared across modules.

#include <string>
#include <string_view>
#include <vector>

namespace splitscope {

/// "a, b, c" from {"a", "b", "c"} and ", ". (fmt::join would do, but trips
/// GCC 12's false -Wstringop-overflow at -O3.)
inline std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string joined;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) joined += separator;
    joined += parts[i];
  }
  return joined;
}

/// "1 device", "2 devices": a count with its noun, plural unless it is one
/// (`plural` where adding "s" is wrong).
inline std::string counted(long long count, std::string_view noun, std::string_view plural = {}) {
  std::string text = std::to_string(count) + " ";
  if (count == 1) return text.append(noun);
  return plural.empty() ? text.append(noun).append("s") : text.append(plural);
}

/// `text` safe to print on a terminal: control bytes (a newline, ESC of
/// `\x1b[2J`, DEL) written as `\xNN`, so a name read from a file cannot break
/// a table's rows or drive the terminal. Other bytes (UTF-8) pass unchanged.
inline std::string printable(std::string_view text) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace splitscope
