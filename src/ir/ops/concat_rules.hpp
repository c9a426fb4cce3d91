#pragma once
/// \file
/// Where each input of a concat lands in its output, for the kernels.

#include <cstdint>

#include "ir/op.hpp"

namespace splitscope {

/// Where input slot `slot` starts along a concat's output axis 0.
int64_t concat_offset(const OpNode& node, int slot);

}  // namespace splitscope
