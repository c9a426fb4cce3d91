#pragma once
/// \file
/// The data movement of transfers and collectives, as strided copies and sums
/// between channel blocks. A collective runs as the sends of its algorithm
/// (plan/collective_schedule.hpp), each one of the calls below.

#include <vector>

#include "exec/cpu/channel_block.hpp"

namespace splitscope {

/// Copies the channels `from` and `to` have in common (every row). Rows and
/// inner sizes must match. A transfer is this with equal ranges.
void copy_channels(ConstChannelBlock from, ChannelBlock to);

/// Copies channels `channels` of every row; both blocks must hold them.
void copy_channel_range(ConstChannelBlock from, ChannelBlock to, Range channels);

/// One receive of a ring all-reduce over `count` floats: to = data, or
/// to = own + data for a reducing step (the receiver's own contribution
/// first, so that each chunk is summed in ring order).
void receive_chunk(const float* data, const float* own, float* to, int64_t count);

/// All-gather / concat on one device: places each part at its channels of
/// `to`. The parts must tile `to`'s channels.
void gather_channels(const std::vector<ConstChannelBlock>& parts, ChannelBlock to);

/// All-reduce on one device: to = Σ parts, summed in the order given (every
/// device sums in participant order, so every copy of the result is the same
/// to the bit). Every part has `to`'s shape.
void sum_blocks(const std::vector<ConstChannelBlock>& parts, ChannelBlock to);

}  // namespace splitscope
