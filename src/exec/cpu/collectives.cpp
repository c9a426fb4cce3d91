#include "exec/cpu/collectives.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "util/check.hpp"

namespace splitscope {

void copy_channels(ConstChannelBlock from, ChannelBlock to) {
  SPLITSCOPE_CHECK(from.rows == to.rows && from.inner == to.inner,
                   fmt::format("copy between blocks of {}x{} and {}x{}", from.rows, from.inner, to.rows,
                               to.inner));
  const int64_t first = std::max(from.channels.begin, to.channels.begin);
  const int64_t last = std::min(from.channels.end, to.channels.end);
  if (last <= first) return;
  const int64_t floats = (last - first) * to.inner;
  if (from.channels == to.channels) {
    std::copy_n(from.data, from.floats(), to.data);
    return;
  }
  for (int64_t row = 0; row < to.rows; ++row) {
    std::copy_n(from.at(row, first), floats, to.at(row, first));
  }
}

void copy_channel_range(ConstChannelBlock from, ChannelBlock to, Range channels) {
  SPLITSCOPE_CHECK(from.rows == to.rows && from.inner == to.inner && from.channels.contains(channels) &&
                       to.channels.contains(channels),
                   fmt::format("copy of channels {} between blocks of {} and {}", channels.to_string(),
                               from.channels.to_string(), to.channels.to_string()));
  const int64_t floats = channels.size() * to.inner;
  if (floats == 0) return;
  for (int64_t row = 0; row < to.rows; ++row) {
    std::copy_n(from.at(row, channels.begin), floats, to.at(row, channels.begin));
  }
}

void receive_chunk(const float* data, const float* own, float* to, int64_t count) {
  if (own == nullptr) {
    std::copy_n(data, count, to);
    return;
  }
  for (int64_t i = 0; i < count; ++i) to[i] = own[i] + data[i];
}

void gather_channels(const std::vector<ConstChannelBlock>& parts, ChannelBlock to) {
  int64_t covered = 0;
  for (const ConstChannelBlock& part : parts) {
    SPLITSCOPE_CHECK(to.channels.contains(part.channels),
                     "a gathered part " + part.channels.to_string() + " lies outside " +
                         to.channels.to_string());
    copy_channels(part, to);
    covered += part.channels.size();
  }
  SPLITSCOPE_CHECK(covered == to.channels.size(),
                   fmt::format("gathered parts cover {} of {} channels", covered, to.channels.size()));
}

void sum_blocks(const std::vector<ConstChannelBlock>& parts, ChannelBlock to) {
  SPLITSCOPE_CHECK(!parts.empty(), "an all-reduce of nothing");
  for (const ConstChannelBlock& part : parts) {
    SPLITSCOPE_CHECK(part.rows == to.rows && part.channels == to.channels && part.inner == to.inner,
                     "all-reduce parts of different shapes");
  }
  const int64_t floats = to.floats();
  std::copy_n(parts.front().data, floats, to.data);
  for (size_t p = 1; p < parts.size(); ++p) {
    const float* part = parts[p].data;
    for (int64_t i = 0; i < floats; ++i) to.data[i] += part[i];
  }
}

}  // namespace splitscope
