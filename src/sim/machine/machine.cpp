#include "sim/machine/machine.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "util/check.hpp"

namespace splitscope {

std::string_view to_string(TopologyKind kind) {
  switch (kind) {
    case TopologyKind::kSwitch: return "switch";
    case TopologyKind::kHostStaged: return "host-staged";
    case TopologyKind::kMultiNode: return "multi-node";
  }
  return "?";
}

std::string_view to_string(NetworkKind kind) {
  switch (kind) {
    case NetworkKind::kNonBlocking: return "non-blocking";
    case NetworkKind::kFatTree: return "fat-tree";
    case NetworkKind::kRail: return "rail";
  }
  return "?";
}

double DeviceSpec::matrix_flops_per_second() const {
  const auto peak = peak_tflops.find(matrix_math);
  SPLITSCOPE_CHECK(peak != peak_tflops.end(), "no peak for matrix_math '" + matrix_math + "'");
  return peak->second * 1e12;
}

double DeviceSpec::memory_bytes_per_second() const { return memory_bandwidth_gbps * 1e9; }

int64_t DeviceSpec::memory_bytes() const {
  // Saturate rather than wrap to a negative size (machine files keep it far below; this is the backstop).
  const double bytes = memory_gib * kBytesPerGib;
  return bytes >= 0x1p63 ? INT64_MAX : std::llround(bytes);
}

double DeviceSpec::launch_overhead_seconds() const { return launch_overhead_us * 1e-6; }

bool DeviceSpec::has_efficiency(std::string_view kind) const {
  return efficiency.count(std::string(kind)) > 0 || efficiency.count(std::string(kDefaultEfficiency)) > 0;
}

namespace {

/// `kind`'s entry of a per-kind table, else its "default", else 1.
double entry_or_default(const std::map<std::string, double>& table, std::string_view kind) {
  if (const auto it = table.find(std::string(kind)); it != table.end()) return it->second;
  if (const auto it = table.find(std::string(kDefaultEfficiency)); it != table.end()) return it->second;
  return 1.0;
}

}  // namespace

double DeviceSpec::efficiency_of(std::string_view kind) const { return entry_or_default(efficiency, kind); }

double DeviceSpec::contention_of(std::string_view kind) const { return entry_or_default(contention, kind); }

double DeviceSpec::speedup_of(std::string_view kind) const { return entry_or_default(speedup, kind); }

std::pair<std::string_view, int> split_pooled_key(std::string_view key) {
  constexpr std::string_view kShares = "|shares=";
  const size_t at = key.rfind(kShares);
  if (at == std::string_view::npos) return {key, 1};
  int shares = 0;
  const std::string_view digits = key.substr(at + kShares.size());
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), shares);
  if (error != std::errc{} || end != digits.data() + digits.size() || shares < 2) return {key, 1};
  return {key.substr(0, at), shares};
}

namespace {

/// The entries of `keyed` for devices of `shares` shares, under their plain keys.
std::map<std::string, double> entries_for_shares(const std::map<std::string, double>& keyed, int shares) {
  std::map<std::string, double> out;
  for (const auto& [key, value] : keyed) {
    const auto [plain, of] = split_pooled_key(key);
    if (of == shares) out.emplace(plain, value);
  }
  return out;
}

}  // namespace

Machine machine_for_plan(const Machine& machine, int plan_devices) {
  if (!machine.pooled || plan_devices <= 0 || plan_devices >= machine.devices) return machine;
  const int shares = machine.devices / plan_devices;
  Machine scaled = machine;
  scaled.device.memory_gib *= shares;
  scaled.device.last_level_cache_mib *= shares;
  // Measured speedups price this share count's ops kind by kind; without
  // them, a device of N shares is N times one (its peaks and bandwidth).
  scaled.device.speedup = entries_for_shares(machine.device.speedup, shares);
  // The sgemm grid timed on this many threads, which prices its products whole; else the one-thread grid.
  const bool timed_here = std::any_of(machine.device.gemm_rates.begin(), machine.device.gemm_rates.end(),
                                      [&](const GemmRatePoint& point) { return point.threads == shares; });
  if (scaled.device.speedup.empty()) {
    for (auto& [precision, peak] : scaled.device.peak_tflops) peak *= shares;
    // A one-thread grid standing for N threads scales as the peaks do; a grid timed on N threads is already theirs.
    if (!timed_here) {
      for (GemmRatePoint& point : scaled.device.gemm_rates) point.gflops *= shares;
    }
    scaled.device.memory_bandwidth_gbps *= shares;
    scaled.device.sm_count *= shares;  // 0 (derived from the peak) stays 0, and the peak scales
  }
  // The op times measured on devices of this many shares, under their plain
  // signatures; one-share times do not describe a bigger device, so ops
  // without a time of their own fall back to the (scaled) rules.
  scaled.calibration.op_times_us = entries_for_shares(machine.calibration.op_times_us, shares);
  scaled.device.contention = entries_for_shares(machine.device.contention, shares);
  // Of the grids of those threads, the one alone and the one timed with as many devices running as the plan has.
  std::erase_if(scaled.device.gemm_rates, [&](const GemmRatePoint& point) {
    return point.threads != (timed_here ? shares : 1) || (point.running != 1 && point.running != plan_devices);
  });
  return scaled;
}

std::string pooled_op_key(const std::string& signature, int shares) {
  return shares <= 1 ? signature : signature + "|shares=" + std::to_string(shares);
}

std::string alone_op_key(const std::string& signature) { return signature + "|alone"; }

}  // namespace splitscope
