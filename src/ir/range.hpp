#pragma once
/// \file
/// A half-open index range [begin, end): a slice of the batch or of a tensor's
/// axis 0 (units, channels, hidden units, steps).

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace splitscope {

struct Range {
  int64_t begin = 0;
  int64_t end = 0;

  int64_t size() const { return end - begin; }
  bool empty() const { return end <= begin; }
  bool contains(const Range& other) const { return begin <= other.begin && other.end <= end; }
  bool operator==(const Range&) const = default;
  auto operator<=>(const Range&) const = default;
  std::string to_string() const { return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")"; }
};

/// Splits [0, total) into `parts` contiguous ranges whose sizes differ by at
/// most one (the first `total % parts` ranges get the extra element).
std::vector<Range> split_evenly(int64_t total, int64_t parts);

/// Splits [0, total) into ranges aligned to multiples of `granule`, as evenly
/// as possible in granules (used to split grouped convolutions along groups).
std::vector<Range> split_aligned(int64_t total, int64_t parts, int64_t granule);

}  // namespace splitscope
