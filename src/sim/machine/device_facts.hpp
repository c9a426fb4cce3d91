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
/// - memory_bytes_per_second: the datasheet memory bandwidth itself, what
///   other traffic (a collective's, nccl_contention.hpp) takes a share of.
/// - launch_seconds: `launch_overhead_us`, else 5 µs per kernel: the host-side
///   cost of a CUDA launch, which small kernels cannot hide (Meta's Holistic
///   Trace Analysis documentation: "usually between 5-20 microseconds"; the
///   low end, as launches are issued asynchronously).
/// - vector_flops_per_second: the fp32 peak (the CUDA cores, which run the
///   element-wise math and the Winograd and FFT transforms); matrix: the
///   peak of `matrix_math` (which prices the products), times the issue
///   fraction below when the products run on the CUDA cores (fp32).
/// - fp32 issue fraction: an SM has four partitions, each with one warp
///   scheduler issuing one warp instruction (32 threads) per clock (NVIDIA's
///   Volta, Ampere and Hopper whitepapers). With 16 FP32 lanes a partition
///   (64 per SM: GV100, GA100) a warp's FFMA holds the FP32 pipe two
///   clocks, and the scheduler issues a product loop's loads and address
///   arithmetic in the clock between, at no cost to the peak (GP100's 64
///   lanes sit in two partitions whose schedulers dispatch two instructions a
///   clock: the same). With 32 lanes a partition (128 per SM: GH100) the
///   peak needs an FFMA every clock, so each other instruction of the loop
///   takes a clock from the FFMAs. A register-blocked FP32 product's main
///   loop (CUTLASS's default SIMT tile: a 128×128×8 block of 256 threads,
///   8×8 outputs a thread) issues, per 8-deep k block, 512 FFMAs and about
///   41 others: 32 shared-memory loads (LDS.128, four per k), 2 global loads
///   and 2 shared stores of the next tiles, a barrier, and about 4 for
///   pointers and the loop: 512 / 553 = 92.6% of the peak. Lanes per SM are
///   fp32 peak / (2 · sm_count · clock) where the file gives both, else 64.
/// - nccl_generation: the GPU generation NCCL's tuning tables key on,
///   from the precisions the datasheet lists (nccl_protocol.hpp).

#include "sim/machine/machine.hpp"
#include "sim/network/nccl_protocol.hpp"

namespace splitscope {

/// FP32 lanes per SM on GP100, GV100 and GA100.
inline constexpr int kFp32LanesPerSm = 64;
/// The clock assumed when a file gives no `boost_clock_MHz`.
inline constexpr double kDefaultBoostClockMhz = 1400;
/// What streaming kernels reach of the datasheet memory bandwidth.
inline constexpr double kStreamingFraction = 0.9;
/// FP32 lanes per SM from which a partition has 32 (one warp's FFMA a clock).
inline constexpr int kFullWidthFp32LanesPerSm = 128;
/// The FFMAs and the other instructions of a CUTLASS-style SIMT SGEMM main
/// loop per 8-deep k block (128×128×8 block, 8×8 outputs per thread).
inline constexpr double kSgemmLoopFfmas = 512;
inline constexpr double kSgemmLoopOtherInstructions = 32 + 2 + 2 + 1 + 4;
/// The launch overhead assumed when a file gives none.
inline constexpr double kDefaultLaunchOverheadUs = 5;

struct DeviceFacts {
  double matrix_flops_per_second = 0;
  double vector_flops_per_second = 0;
  int sm_count = 1;
  double dram_bytes_per_second = 0;
  double memory_bytes_per_second = 0;  ///< the datasheet memory bandwidth
  double launch_seconds = 0;
  /// Bytes of one stored element of the plan priced (Plan::precision): 4
  /// for float32, 2 for bf16 and fp16 storage. What the shape rules count
  /// the tensors they move in (not a device fact: OpCostModel sets it).
  double element_bytes = 4;
  NcclGeneration nccl_generation = NcclGeneration::kVolta;

  /// One SM's share of the matrix peak.
  double sm_flops_per_second() const { return matrix_flops_per_second / sm_count; }
};

/// The SM count `device` gives, or the one derived from its fp32 peak and clock.
int sm_count_of(const DeviceSpec& device);

/// FP32 lanes per SM: round(fp32 peak / (2 · sm_count · boost clock)) where
/// `device` gives both, else kFp32LanesPerSm.
int fp32_lanes_per_sm(const DeviceSpec& device);

/// What a CUDA-core (fp32) product's main loop can issue of the fp32 peak:
/// kSgemmLoopFfmas / (FFMAs + others) at kFullWidthFp32LanesPerSm lanes or
/// more, else 1.
double fp32_issue_fraction(int lanes_per_sm);

/// The facts of `device`, as the rules use them.
DeviceFacts device_facts(const DeviceSpec& device);

}  // namespace splitscope
