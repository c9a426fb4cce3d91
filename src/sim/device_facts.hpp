#pragma once
/// \file
/// The datasheet facts of a device that the shape rules read
/// (docs/cost-model.md), each either given by the machine file or derived
/// from the fields it does give:
///
/// - sm_count: `sm_count`, else round(peak_fp32 / (2 · 64 · clock)): an FP32
///   peak is 2 FLOPs (one fused multiply-add) per FP32 lane per clock, and the
///   SMs of the GPUs the defaults aim at (P100's GP100, V100's GV100,
///   A100's GA100) have 64 FP32 lanes each (NVIDIA's Pascal, Volta and Ampere
///   architecture whitepapers); the clock is `boost_clock_MHz`, else 1400 MHz
///   (between the datasheet boost clocks of P100 PCIe, 1303 MHz, and V100
///   SXM2, 1530 MHz). P100 PCIe (9.3 TFLOP/s, 1303 MHz) gives 56 and V100
///   SXM2 (15.7, 1530) 80, their SM counts. Hopper has 128 FP32 lanes per
///   SM, so H100 files give `sm_count`.
/// - dram_bytes_per_second: what streaming kernels reach of the datasheet
///   memory bandwidth, 90% of it: DRAM refresh alone takes tRFC / tREFI =
///   350 ns / 3.9 µs ≈ 9% of an HBM2 channel's time (JEDEC JESD235 timing),
///   and NVIDIA's Tesla V100 whitepaper quotes up to 95% utilization for
///   Volta's memory controller, which it says delivers 1.5× Pascal GP100's.
/// - launch_seconds: `launch_overhead_us`, else 5 µs per kernel: the host-side
///   cost of a CUDA launch, which small kernels cannot hide (Meta's Holistic
///   Trace Analysis documentation: "usually between 5-20 microseconds"; the
///   low end, as launches are issued asynchronously).
/// - vector_flops_per_second: the fp32 peak (the CUDA cores, which run the
///   element-wise math and the Winograd and FFT transforms); matrix: the
///   peak of `matrix_math` (which prices the products).
/// - nccl_generation: the GPU generation NCCL's tuning tables key on,
///   from the precisions the datasheet lists (nccl_protocol.hpp).

#include "sim/machine.hpp"
#include "sim/nccl_protocol.hpp"

namespace splitscope {

/// FP32 lanes per SM on GP100, GV100 and GA100.
inline constexpr int kFp32LanesPerSm = 64;
/// The clock assumed when a file gives no `boost_clock_MHz`.
inline constexpr double kDefaultBoostClockMhz = 1400;
/// What streaming kernels reach of the datasheet memory bandwidth.
inline constexpr double kStreamingFraction = 0.9;
/// The launch overhead assumed when a file gives none.
inline constexpr double kDefaultLaunchOverheadUs = 5;

struct DeviceFacts {
  double matrix_flops_per_second = 0;
  double vector_flops_per_second = 0;
  int sm_count = 1;
  double dram_bytes_per_second = 0;
  double launch_seconds = 0;
  NcclGeneration nccl_generation = NcclGeneration::kVolta;

  /// One SM's share of the matrix peak.
  double sm_flops_per_second() const { return matrix_flops_per_second / sm_count; }
};

/// The SM count `device` gives, or the one derived from its fp32 peak and clock.
int sm_count_of(const DeviceSpec& device);

/// The facts of `device`, as the rules use them.
DeviceFacts device_facts(const DeviceSpec& device);

}  // namespace splitscope
