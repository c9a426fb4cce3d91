#pragma once
/// \file
/// The group rule of a grouped convolution, which partitioners (to split
/// along whole groups) and kernels (to find a slice's input) need too.

#include "ir/op.hpp"
#include "ir/range.hpp"

namespace splitscope {

/// The input channels (axis 0) that output channels `out` of a conv2d read:
/// the channels of the groups those filters belong to.
Range conv_input_channels(const OpNode& conv, Range out);

}  // namespace splitscope
