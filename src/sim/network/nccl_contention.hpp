#pragma once
/// \file
/// What NCCL's kernels take from the compute they overlap on a GPU: a rule
/// of the device model (docs/cost-model.md, "Collectives beside compute").
///
/// NCCL runs a collective as one kernel whose grid has one CTA per channel
/// (NCCL's user guide: NCCL_MIN_CTAS / NCCL_MAX_CTAS bound "the number of
/// CTAs" and NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS "the number of
/// channels", the same count; src/enqueue.cc launches nChannels blocks).
/// A CTA of NCCL_MAX_NTHREADS (640) threads with its FIFO bookkeeping in
/// shared memory leaves no room on its SM for a compute kernel's tile, so
/// while the collective runs on a GPU its channels' SMs are not the
/// compute's:
///
///   sm share = channels / sm_count.
///
/// The channels of a ring, as NCCL 2.18-2.19's topology search gives them
/// (src/graph/search.cc ncclTopoCompute and dupChannels, src/graph/connect.cc
/// ncclTopoPostset), from the per-GPU bandwidth NCCL counts (the ring's
/// Simple bus bandwidth, nccl_protocol.hpp):
///
///  1. the per-channel speed is the first entry of NCCL's speed array not
///     above that bandwidth: in one node {40, 30, 20, 18, 15, 12, 10, 9, 7,
///     6, 5, 4, 3} GB/s, Hopper's {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
///     across nodes {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3,
///     2.4, 1.2, 0.24, 0.12}, Hopper's {48, 45, 42, 40, 30, 24, 22, 20,
///     17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
///  2. the search packs as many rings of that speed as the bandwidth holds,
///     floor(bandwidth / speed), at most MAXCHANNELS / 2 = 16;
///  3. dupChannels doubles them (at most 16) when the speed is at least
///     25 GB/s, unless the GPU is newer than Ampere, the speed under 50 GB/s
///     and there are more than 4;
///  4. ncclTopoPostset doubles the rings again (each runs twice), at most
///     MAXCHANNELS = 32.
///
/// DGX A100 (12 NVLink 3 links counted at 20 GB/s: 240): 40 GB/s × 6, 12,
/// 24 channels of 108 SMs (22%); DGX H100 (18 links at 20.6: 370.8):
/// 60 GB/s × 6, 12, 24 of 132 SMs (18%); P100 over PCIe (12 GB/s): 1, 1, 2
/// of 56 (3.6%). Left out: NCCL trims the channels of a small collective
/// (enqueue.cc: fewer channels while each would get too few bytes), counts
/// NICs per GPU across nodes, and NVLS/CollNet's own CTAs.
///
/// Memory: a ring moves every byte a GPU receives through that GPU's DRAM
/// several times. The sender writes it into the receiver's FIFO (one write);
/// the receiver's CTA reads it (one read); in the reduce-scatter half it
/// also reads its own input chunk and writes the sum (one read, one write),
/// in the all-gather half it writes the chunk to its output (one write):
/// 4 accesses a byte, then 3, so 3.5 for an all-reduce, 3 for an
/// all-gather. The collective's received bytes (S · steps / ranks) over
/// NCCL's own estimate of its time give the rate, so a latency-bound small
/// bucket takes little:
///
///   memory share = accesses · received / seconds / datasheet bandwidth.
///
/// Both shares are capped at kMaxNcclShare: the compute keeps some of the GPU.
///
/// An op overlapped by a collective runs at the pace what is left gives it
/// (nccl_overlap_factor()): its time T alone, of which the part
/// min(1, DRAM bytes / (achieved DRAM rate · T)) streams memory, becomes
///
///   T · max(1 / (1 − sm share), memory part / (1 − memory share)):
///
/// all of it runs on the SMs that are left, and its DRAM traffic gets the
/// bandwidth that is left. The engine re-times a running op whenever a
/// collective starts or ends on its device (engine.hpp).

#include "sim/machine/device_facts.hpp"
#include "sim/network/nccl_protocol.hpp"

namespace splitscope {

/// No collective takes more than this of a GPU's SMs or memory bandwidth.
inline constexpr double kMaxNcclShare = 0.9;
/// MAXCHANNELS in NCCL 2.18-2.19 (src/include/device.h).
inline constexpr int kNcclMaxChannels = 32;
/// DRAM accesses per received byte: all-reduce (mean of its two halves), all-gather.
inline constexpr double kAllReduceDramAccesses = 3.5;
inline constexpr double kAllGatherDramAccesses = 3.0;

/// The channels (and CTAs) NCCL runs `ring` on, by the steps above.
int nccl_ring_channels(const NcclRing& ring);

/// What a running collective takes of one of its GPUs.
struct NcclShare {
  double sm = 0;      ///< of the SMs
  double memory = 0;  ///< of the datasheet memory bandwidth
};

/// The share collective `sends` (NCCL's pricing of it) takes of a GPU with `facts`.
NcclShare nccl_share(const NcclRingSends& sends, const DeviceFacts& facts);

/// How much longer an op takes beside a collective taking `share`: `memory_part`
/// is the part of its time alone that streams DRAM (0 to 1).
double nccl_overlap_factor(const NcclShare& share, double memory_part);

/// memory_part for an op of `seconds` alone that reads and writes `dram_bytes`.
double memory_part(double dram_bytes, double seconds, const DeviceFacts& facts);

}  // namespace splitscope
