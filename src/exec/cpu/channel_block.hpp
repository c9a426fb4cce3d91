#pragma once
/// \file
/// A block of a tensor as every executor stores a Plan value:
/// [rows][channels][inner] floats, contiguous (plan.hpp).

#include <cstdint>

#include "ir/range.hpp"

namespace splitscope {

/// `rows` samples of channels `channels` (along axis 0 of the sample), each
/// channel `inner` floats, at `data`.
template <typename T>
struct BasicChannelBlock {
  T* data = nullptr;
  int64_t rows = 0;
  Range channels;
  int64_t inner = 1;

  int64_t row_floats() const { return channels.size() * inner; }
  int64_t floats() const { return rows * row_floats(); }
  /// Channel `channel` (an index of the whole tensor, inside `channels`) of row `row`.
  T* at(int64_t row, int64_t channel) const {
    return data + row * row_floats() + (channel - channels.begin) * inner;
  }
  operator BasicChannelBlock<const T>() const { return {data, rows, channels, inner}; }
};

using ChannelBlock = BasicChannelBlock<float>;
using ConstChannelBlock = BasicChannelBlock<const float>;

}  // namespace splitscope
