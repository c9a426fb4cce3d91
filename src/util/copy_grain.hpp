#pragma once
/// \file
/// How finely the cpu kernels split a copy over threads: what the im2col
/// kernel does (exec/cpu/kernels/conv2d.cpp) and what the simulator prices
/// it by (sim/costs/cpu_kernel_cost.cpp), in one place so that the two agree.

#include <algorithm>
#include <cstdint>

namespace splitscope {

/// Elements a thread copies at least: PyTorch's rule for element-wise work
/// (at::internal::GRAIN_SIZE in ATen/Parallel.h, 32768), below which a split
/// costs more in hand-offs than it saves.
inline constexpr int64_t kMinCopyElements = 32768;

/// Rows of `row_elements` each per block, so that a block copies at least kMinCopyElements.
constexpr int64_t copy_grain_rows(int64_t row_elements) {
  return std::max<int64_t>(1, (kMinCopyElements + row_elements - 1) / std::max<int64_t>(row_elements, 1));
}

}  // namespace splitscope
