#pragma once
/// \file
/// The group rule of a grouped convolution, which partitioners (to split
/// along whole groups) and kernels (to find a slice's input) need too.

#include <cstdint>
#include <vector>

#include "ir/op.hpp"
#include "ir/range.hpp"

namespace splitscope {

/// The input channels (axis 0) that output channels `out` of a conv2d read:
/// the channels of the groups those filters belong to.
Range conv_input_channels(const OpNode& conv, Range out);

/// The channels of the groups that filters `filters` belong to, in a layer of
/// `groups` groups with `filters_per_group` and `channels_per_group` each.
Range group_channels(Range filters, int64_t filters_per_group, int64_t channels_per_group);

/// Whether filters `filters` are whole groups of `filters_per_group`.
bool whole_groups(Range filters, int64_t filters_per_group);

/// The library calls a slice of filters runs as: the whole slice when it is
/// made of whole groups (one grouped call), else its part of each group it
/// touches, one call each (cuDNN needs as many filters in every group).
std::vector<Range> group_pieces(Range filters, int64_t filters_per_group);

}  // namespace splitscope
