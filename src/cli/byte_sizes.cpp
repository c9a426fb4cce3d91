#include "cli/byte_sizes.hpp"

#include <fmt/format.h>

#include <charconv>

#include "util/errors.hpp"

namespace splitscope::cli {
namespace {

constexpr int64_t kMaxBytes = int64_t{1} << 40;

int64_t parse_size(const std::string& word, const std::string& option) {
  int64_t number = 0;
  const char* begin = word.data();
  const char* end = word.data() + word.size();
  const auto [rest, error] = std::from_chars(begin, end, number);
  int64_t scale = 1;
  if (rest != end) {
    if (rest + 1 != end) scale = 0;
    switch (*rest) {
      case 'K': case 'k': scale *= int64_t{1} << 10; break;
      case 'M': case 'm': scale *= int64_t{1} << 20; break;
      case 'G': case 'g': scale *= int64_t{1} << 30; break;
      default: scale = 0;
    }
  }
  if (error != std::errc() || rest == begin || scale == 0) {
    throw InputError(option, word, "is not a size; give bytes as a number with an optional K, M or G (e.g. 64M)");
  }
  if (number < 1 || number > kMaxBytes / scale) {
    throw InputError(option, word, "must be from 1 byte to 1024G");
  }
  return number * scale;
}

}  // namespace

std::vector<int64_t> parse_byte_sizes(const std::vector<std::string>& parts, const std::string& option) {
  std::vector<int64_t> sizes;
  for (const std::string& part : parts) {
    const size_t colon = part.find(':');
    if (colon == std::string::npos) {
      sizes.push_back(parse_size(part, option));
      continue;
    }
    const int64_t low = parse_size(part.substr(0, colon), option);
    const int64_t high = parse_size(part.substr(colon + 1), option);
    if (low > high) throw InputError(option, part, "a range MIN:MAX needs MIN <= MAX");
    for (int64_t size = low; size <= high; size *= 2) sizes.push_back(size);
  }
  if (sizes.empty()) throw InputError(option, "", "give at least one size");
  return sizes;
}

}  // namespace splitscope::cli
