#include "sim/network/nccl_contention.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>

namespace splitscope {
namespace {

// search.cc: the per-channel speeds (GB/s) the topology search tries, fastest first.
constexpr std::array<double, 13> kSpeedsIntra{40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
constexpr std::array<double, 11> kHopperSpeedsIntra{60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
constexpr std::array<double, 19> kSpeedsInter{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                              7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array<double, 17> kHopperSpeedsInter{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                                    15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// search.cc: a ring graph searches at most MAXCHANNELS / 2 channels; dupChannels doubles from 25 GB/s a
// channel, except past Ampere under 50 GB/s with more than 4.
constexpr int kSearchMaxChannels = kNcclMaxChannels / 2;
constexpr double kDuplicateFromGBps = 25.0;
constexpr double kHopperDuplicateFromGBps = 50.0;
constexpr int kHopperDuplicateMaxChannels = 4;

std::span<const double> speeds(const NcclRing& ring) {
  const bool hopper = ring.generation == NcclGeneration::kHopper;
  if (ring.nodes > 1) {
    return hopper ? std::span<const double>(kHopperSpeedsInter) : std::span<const double>(kSpeedsInter);
  }
  return hopper ? std::span<const double>(kHopperSpeedsIntra) : std::span<const double>(kSpeedsIntra);
}

}  // namespace

int nccl_ring_channels(const NcclRing& ring) {
  const double bandwidth_gbps = ring.bus_bytes_per_second / 1e9;
  const std::span<const double> tried = speeds(ring);
  double speed = tried.back();
  for (double s : tried) {
    if (s <= bandwidth_gbps) {
      speed = s;
      break;
    }
  }
  int channels = static_cast<int>(std::clamp(std::floor(bandwidth_gbps / speed), 1.0, double{kSearchMaxChannels}));
  const bool past_ampere = ring.generation == NcclGeneration::kHopper;
  const bool duplicate = speed >= kDuplicateFromGBps &&
                         !(past_ampere && speed < kHopperDuplicateFromGBps && channels > kHopperDuplicateMaxChannels);
  if (duplicate) channels = std::min(2 * channels, kSearchMaxChannels);
  return std::min(2 * channels, kNcclMaxChannels);
}

NcclShare nccl_share(const NcclRingSends& sends, const DeviceFacts& facts) {
  const NcclRing& ring = sends.ring;
  NcclShare share;
  share.sm = std::min(kMaxNcclShare, static_cast<double>(nccl_ring_channels(ring)) / std::max(1, facts.sm_count));
  const double seconds = nccl_choice(ring, sends.message_bytes).seconds;
  if (seconds > 0 && facts.memory_bytes_per_second > 0) {
    const double received = sends.message_bytes * ring.steps() / ring.ranks;
    const double accesses = ring.kind == CollectiveKind::kAllReduce ? kAllReduceDramAccesses : kAllGatherDramAccesses;
    share.memory = std::min(kMaxNcclShare, accesses * received / seconds / facts.memory_bytes_per_second);
  }
  return share;
}

double nccl_overlap_factor(const NcclShare& share, double memory_part) {
  return std::max(1.0 / (1.0 - share.sm), std::clamp(memory_part, 0.0, 1.0) / (1.0 - share.memory));
}

double memory_part(double dram_bytes, double seconds, const DeviceFacts& facts) {
  if (seconds <= 0 || facts.dram_bytes_per_second <= 0) return 0.0;
  return std::min(1.0, dram_bytes / facts.dram_bytes_per_second / seconds);
}

}  // namespace splitscope
