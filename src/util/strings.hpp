#pragma once
/// \file
/// Small string helpers shared across modules.

#include <string>
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

}  // namespace splitscope
