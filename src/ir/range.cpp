#include "ir/range.hpp"

#include "util/check.hpp"

namespace splitscope {

std::vector<Range> split_evenly(int64_t total, int64_t parts) {
  return split_aligned(total, parts, 1);
}

std::vector<Range> split_aligned(int64_t total, int64_t parts, int64_t granule) {
  SPLITSCOPE_CHECK(parts > 0 && granule > 0 && total % granule == 0, "bad split request");
  const int64_t granules = total / granule;
  SPLITSCOPE_CHECK(parts <= granules, "more parts than granules");
  std::vector<Range> ranges;
  int64_t begin = 0;
  for (int64_t i = 0; i < parts; ++i) {
    const int64_t count = granules / parts + (i < granules % parts ? 1 : 0);
    ranges.push_back({begin, begin + count * granule});
    begin += count * granule;
  }
  return ranges;
}

}  // namespace splitscope
