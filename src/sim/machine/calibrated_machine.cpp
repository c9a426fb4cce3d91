#include "sim/machine/calibrated_machine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>

#include "ir/ops/op_def.hpp"
#include "sim/machine/machine_file.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

constexpr std::string_view kDeviceToDevice = "device_to_device";
constexpr std::string_view kHostStaged = "host_staged";
constexpr std::string_view kPeer = "peer";
constexpr std::string_view kHostToDevice = "host_to_device";

/// The computed kind (every op definition but the network input) named `kind`, or null.
const OpDef* computed_kind(std::string_view kind) {
  for (const OpDef* def : op_defs()) {
    if (def->kind != OpKind::kInput && def->name == kind) return def;
  }
  return nullptr;
}

/// The op kind a signature starts with ("dense:b64:..." -> "dense").
std::string_view signature_kind(std::string_view signature) { return signature.substr(0, signature.find(':')); }

[[noreturn]] void missing(const CalibratedMachineOptions& options, const std::string& field, const std::string& what) {
  throw InputError(options.source.empty() ? "the calibration" : options.source, field, what);
}

const calibration::CopySeries* find_series(const calibration::CalibrationResult& result, std::string_view kind) {
  for (const calibration::CopySeries& series : result.copies) {
    if (series.kind == kind) return &series;
  }
  return nullptr;
}

const calibration::CopySeries& required_series(const calibration::CalibrationResult& result, std::string_view kind,
                                       const CalibratedMachineOptions& options, const std::string& use) {
  const calibration::CopySeries* series = find_series(result, kind);
  if (series == nullptr) {
    missing(options, "copies",
            fmt::format("no {} series, which {} comes from; calibrate again with "
                        "`splitscope calibrate` on the GPU",
                        kind, use));
  }
  if (series->bandwidth_bytes_per_second <= 0) {
    missing(options, "copies",
            fmt::format("the {} series has no bandwidth (got {}), which {} comes from", kind,
                        series->bandwidth_bytes_per_second, use));
  }
  return *series;
}

LinkSpec link_of(const calibration::CopySeries& series) {
  return LinkSpec{series.bandwidth_bytes_per_second / 1e9, series.latency_seconds * 1e6};
}

/// The best GEMM rate of each math, in TFLOP/s, on one thread alone (cpu; a GPU's are all so).
std::map<std::string, double> peak_tflops(const calibration::CalibrationResult& result) {
  std::map<std::string, double> peaks;
  for (const calibration::GemmRate& rate : result.gemm) {
    if (rate.flops_per_second <= 0 || rate.math.empty() || rate.threads != 1 || rate.running != 1) continue;
    double& peak = peaks[rate.math];
    peak = std::max(peak, rate.flops_per_second / 1e12);
  }
  return peaks;
}

/// Sums over the measured ops of some kinds: the roofline's time (at
/// efficiency 1, without the launch) and the measured time less the launch.
struct RooflineFit {
  double roofline_seconds = 0;
  double measured_seconds = 0;
  int ops = 0;
  int launch_bound_ops = 0;  ///< within the launch overhead (measured or roofline): left out of the sums

  /// The efficiency that makes the model's total equal the measured total;
  /// 0 when it cannot be told (nothing measured above the launch overhead).
  double efficiency() const {
    if (ops == 0 || roofline_seconds <= 0 || measured_seconds <= 0) return 0;
    return std::min(1.0, roofline_seconds / measured_seconds);
  }
};

struct Efficiencies {
  std::map<std::string, double> by_key;
  std::string summary;  ///< for the machine's comment
};

Efficiencies fit_efficiencies(const calibration::CalibrationResult& result, const DeviceSpec& device) {
  std::map<std::string, RooflineFit> kinds;
  RooflineFit element_wise;
  RooflineFit activations;
  for (const calibration::OpTime& op : result.op_times) {
    if (op.seconds <= 0 || (op.flops == 0 && op.bytes == 0)) continue;
    const std::string_view kind = signature_kind(op.signature);
    const OpDef* def = computed_kind(kind);
    if (def == nullptr) continue;
    const double roofline = std::max(static_cast<double>(op.flops) / device.matrix_flops_per_second(),
                                     static_cast<double>(op.bytes) / device.memory_bytes_per_second());
    const double measured = op.seconds - device.launch_overhead_seconds();
    // Launch-bound: measured within the launch (it would add a negative time
    // and inflate every pool it joined), or a roofline shorter than one
    // launch, where what is left of the measured time is the fixed cost of a
    // kernel and its timing, not a rate. Fitted as a rate, such ops gave the
    // H100's epilogue 0.0007 of the roofline (nine tiny relus at 6 µs), which
    // priced a 2 MB all-reduce epilogue at 2 ms (reports/h100-80gb-hbm3/).
    if (measured <= 0 || roofline < device.launch_overhead_seconds()) {
      ++kinds[std::string(kind)].launch_bound_ops;
      continue;
    }
    for (RooflineFit* fit : {&kinds[std::string(kind)], def->cost_class == CostClass::kMatrix ? nullptr : &element_wise,
                             def->activation ? &activations : nullptr}) {
      if (fit == nullptr) continue;
      fit->roofline_seconds += roofline;
      fit->measured_seconds += measured;
      ++fit->ops;
    }
  }
  Efficiencies out;
  auto record = [&](const std::string& key, const RooflineFit& fit) {
    const double efficiency = fit.efficiency();
    if (efficiency <= 0) {
      if (fit.launch_bound_ops > 0) {
        out.summary +=
            fmt::format("; {}: none (its {} ops are launch-bound)", key, fit.launch_bound_ops);
      }
      return;
    }
    out.by_key[key] = efficiency;
    out.summary += fmt::format("; {} {:.3g} over {} ops{}", key, efficiency, fit.ops,
                               fit.roofline_seconds > fit.measured_seconds ? " (held at 1)" : "");
  };
  for (const auto& [kind, fit] : kinds) record(kind, fit);
  record(std::string(kDefaultEfficiency), element_wise);
  record(std::string(kEpilogueEfficiency), activations);
  if (!out.summary.empty()) out.summary.erase(0, 2);
  return out;
}

DeviceSpec device_from(const calibration::CalibrationResult& result, const CalibratedMachineOptions& options) {
  DeviceSpec device;
  device.name = result.device_name;
  device.peak_tflops = peak_tflops(result);
  if (!device.peak_tflops.count(std::string(kFp32))) {
    missing(options, "gemm", "no fp32 GEMM rate, which every machine needs (the fp32 peak)");
  }
  device.matrix_math = result.dtype.empty() ? std::string(kFp32) : result.dtype;
  if (!device.peak_tflops.count(device.matrix_math)) {
    missing(options, "gemm",
            fmt::format("no {} GEMM rate, though the op times were measured in {} (calibrate --dtype)",
                        device.matrix_math, device.matrix_math));
  }
  const calibration::CopySeries& copies = required_series(result, kDeviceToDevice, options, "the memory bandwidth");
  device.memory_bandwidth_gbps = 2.0 * copies.bandwidth_bytes_per_second / 1e9;  // a copy reads and writes
  if (result.memory_bytes <= 0) missing(options, "device.memory_bytes", "the GPU's memory is not given");
  device.memory_gib = static_cast<double>(result.memory_bytes) / kBytesPerGib;
  device.launch_overhead_us = result.launch.device_seconds_per_kernel * 1e6;
  // The host's cost per device step of an eager run, where calibrate measured it (sim/costs/host_issue.hpp).
  device.host_issue_us = result.host_issue.steps > 0 ? result.host_issue.seconds_per_step * 1e6 : 0.0;
  // The SM count the GPU reported, for the kinds the datasheet rules price (those never measured).
  device.sm_count = result.sm_count > 0 ? result.sm_count : 0;
  return device;
}

TopologySpec shared_bus(int devices, const calibration::CopySeries& series) {
  TopologySpec topology;
  topology.kind = TopologyKind::kHostStaged;
  topology.devices_per_bus = devices;
  topology.bus = link_of(series);
  return topology;
}

/// The peer series from the GPU measured, slowest first.
std::vector<const calibration::CopySeries*> peer_series(const calibration::CalibrationResult& result) {
  std::vector<const calibration::CopySeries*> peers;
  for (const calibration::CopySeries& series : result.copies) {
    if (series.kind == kPeer && series.dst_device != result.device) peers.push_back(&series);
  }
  std::sort(peers.begin(), peers.end(), [](const calibration::CopySeries* a, const calibration::CopySeries* b) {
    return a->bandwidth_bytes_per_second < b->bandwidth_bytes_per_second;
  });
  return peers;
}

/// How many devices ran `op` at once when it was timed (OpTime::running;
/// files without it timed cpu ops on every device at once).
int running_of(const calibration::OpTime& op, int cores) {
  return op.running > 0 ? op.running : std::max(1, cores / op.shares);
}

/// Whether `op` was timed alone beside idle devices (not the one device of all the shares, alone by necessity).
bool timed_alone(const calibration::OpTime& op, int cores) {
  return running_of(op, cores) == 1 && cores / op.shares > 1;
}

/// A cpu calibration's timed kernel passes in the machine file's units (ns,
/// µs); none where it holds no one-thread im2col (raw files from before them).
CpuPassRates calibrated_pass_rates(const calibration::KernelPassTimes& times) {
  CpuPassRates rates;
  const bool one_thread = std::any_of(times.im2col.begin(), times.im2col.end(),
                                      [](const calibration::Im2colTime& time) { return time.threads == 1; });
  if (!one_thread) return rates;  // unmeasured (older files): the passes keep the memory rate
  rates.fill_ns_per_value = times.fill_seconds_per_value * 1e9;
  for (const auto& [name, seconds] : times.activation_seconds_per_value) {
    if (timed_activation(name)) rates.activation_ns_per_value[name] = seconds * 1e9;
  }
  for (const calibration::Im2colTime& time : times.im2col) {
    if (rates.im2col_on(time.threads) != nullptr) continue;
    rates.im2col.push_back({time.threads, time.seconds_per_value * 1e9, time.seconds_per_call * 1e6});
  }
  for (const auto& [kind, seconds] : times.pool_seconds_per_window_value) {
    if (timed_pool(kind) && seconds > 0) rates.pool_ns_per_window_value[kind] = seconds * 1e9;
  }
  return rates;
}

/// The fp32 sgemm rates of a cpu calibration as a curve's grids, one per
/// thread count and running count timed (gemm_rate_curve.hpp); empty where
/// they do not form full grids of more than one shape (raw files from before
/// the grid: three square products).
std::vector<GemmRatePoint> calibrated_gemm_rates(const calibration::CalibrationResult& result) {
  std::vector<GemmRatePoint> points;
  for (const calibration::GemmRate& rate : result.gemm) {
    if (rate.math == kFp32 && rate.flops_per_second > 0) {
      points.push_back(GemmRatePoint{rate.m, rate.n, rate.k, rate.flops_per_second / 1e9, rate.threads, rate.running});
    }
  }
  if (points.size() < 2 || !gemm_grid_problem(points).empty()) return {};
  return points;
}

/// What a pooled machine fits on its op times, per share count.
struct PooledFits {
  std::map<std::string, double> efficiency;
  std::map<std::string, double> contention;
  std::map<std::string, double> speedup;
  std::string speedup_summary;
  std::string efficiency_summary;
  std::string contention_summary;
};

/// Per share count N > 1: how many times faster a device of N shares runs
/// each kind than one share, by the executor's kernels
/// (CalibrationResult::one_thread_kinds): 1 for the kinds whose kernel runs
/// on one thread, N (`default`) for the rest, whose products split over the
/// threads. Nothing for raw files that do not say (every kind N times one).
///
/// Speedups measured kind by kind (the one-share times over the same ops'
/// N-share times) were tried and dropped: on the 2-thread build VM conv2d
/// came out 1.37 overall but 1.16-1.42 by size (reports/cpu-amd-epyc-2-
/// threads/2026-11-28-b/before-the-rule/), and priced two-tower's
/// `single` 44% slow and resnet50's 21% slow where twice the rate had them
/// at +10% and -18%; the one-thread rule alone took inception's `single`
/// from -28% to -21% and changed none of the multi-threaded kinds.
void fit_speedups(const calibration::CalibrationResult& result, const std::set<int>& share_counts,
                  PooledFits& fits) {
  if (result.one_thread_kinds.empty()) return;
  std::string one_thread;
  for (const std::string& kind : result.one_thread_kinds) {
    if (kind != kEpilogueEfficiency && computed_kind(kind) == nullptr) continue;
    one_thread += fmt::format("{}{}", one_thread.empty() ? "" : ", ", kind);
    for (const int shares : share_counts) {
      if (shares > 1) fits.speedup[pooled_op_key(kind, shares)] = 1.0;
    }
  }
  for (const int shares : share_counts) {
    if (shares > 1) fits.speedup[pooled_op_key(std::string(kDefaultEfficiency), shares)] = shares;
  }
  fits.speedup_summary = "1 for the kinds run on one thread (" + one_thread + "), N for the others";
}

/// The efficiencies, fitted on the one-share op times alone where there
/// are some (a device alone is the roofline's device: nothing beside it
/// shares its core or memory), else on those with every device busy; a
/// device of N shares is priced from them by its speedups (machine_for_plan()).
/// Per share count s with times both ways (keys `|shares=s` for s > 1), per
/// kind and `default` over all: the contention, the busy times over the same
/// ops' times alone, summed (time-weighted, as the efficiencies are).
///
/// Then the speedups of devices of more shares (fit_speedups()).
///
/// Efficiencies per share count were tried and dropped: fitted on the
/// small and mid-size networks' two-thread times (0.53 of twice the peak
/// for conv2d against 0.77 for one thread, 0.53 against 0.77 for the LSTM
/// cell on the 2-thread build VM: reports/cpu-amd-epyc-2-threads/
/// 2026-11-28-b/before-the-rule/host.calibration.json), they are one number
/// per kind for a speedup that runs from 1.16 to 1.42 with a convolution's
/// size (fit_speedups()).
PooledFits fit_pooled(const calibration::CalibrationResult& result, int cores, const DeviceSpec& one_thread) {
  PooledFits fits;
  const bool any_alone = std::any_of(result.op_times.begin(), result.op_times.end(), [&](const auto& op) {
    return op.shares == 1 && timed_alone(op, cores);
  });
  calibration::CalibrationResult fitted = result;
  std::erase_if(fitted.op_times, [&](const calibration::OpTime& op) {
    return op.shares != 1 || timed_alone(op, cores) != any_alone;
  });
  const Efficiencies efficiencies = fit_efficiencies(fitted, one_thread);
  fits.efficiency = efficiencies.by_key;
  fits.efficiency_summary = efficiencies.summary.empty()
                                ? std::string()
                                : (any_alone ? "alone: " : "busy: ") + efficiencies.summary;
  std::set<int> share_counts;
  for (const calibration::OpTime& op : result.op_times) share_counts.insert(op.shares);
  for (const int shares : share_counts) {
    // Busy and alone sums per kind over the signatures timed both ways.
    std::map<std::string, double> busy_of;
    for (const calibration::OpTime& op : result.op_times) {
      if (op.shares == shares && !timed_alone(op, cores) && op.seconds > 0) busy_of[op.signature] = op.seconds;
    }
    std::map<std::string, std::pair<double, double>> sums;  // kind -> (busy, alone)
    for (const calibration::OpTime& op : result.op_times) {
      if (op.shares != shares || !timed_alone(op, cores) || op.seconds <= 0) continue;
      const auto busy = busy_of.find(op.signature);
      if (busy == busy_of.end()) continue;
      for (const std::string& key : {std::string(signature_kind(op.signature)), std::string(kDefaultEfficiency)}) {
        sums[key].first += busy->second;
        sums[key].second += op.seconds;
      }
    }
    std::string summary;
    for (const auto& [kind, sum] : sums) {
      const bool known = kind == kDefaultEfficiency || computed_kind(kind) != nullptr;
      if (!known || sum.first <= 0 || sum.second <= 0) continue;
      fits.contention[pooled_op_key(kind, shares)] = sum.first / sum.second;
      summary += fmt::format("{}{} {:.3g}", summary.empty() ? "" : ", ", kind, sum.first / sum.second);
    }
    if (!summary.empty()) {
      fits.contention_summary += fmt::format("{}{} share{}: {}", fits.contention_summary.empty() ? "" : "; ",
                                             shares, shares == 1 ? "" : "s", summary);
    }
  }
  fit_speedups(result, share_counts, fits);
  return fits;
}

std::string calibration_origin(const calibration::CalibrationResult& result, const CalibratedMachineOptions& options) {
  std::string origin = fmt::format("Calibrated by `splitscope calibrate` on {} at {}: {} (GPU {}",
                                   result.host.empty() ? "?" : result.host, result.date.empty() ? "?" : result.date,
                                   result.device_name, result.device);
  if (result.sm_count > 0) origin += fmt::format(", {} SMs", result.sm_count);
  if (!result.compute_capability.empty()) origin += ", compute capability " + result.compute_capability;
  origin += fmt::format("), driver {}, runtime {}, cuBLAS {}, cuDNN {}; medians of {} repeats", result.driver,
                        result.runtime, result.cublas, result.cudnn, result.repeats);
  if (!options.calibration_file.empty()) origin += "; raw measurements in " + options.calibration_file;
  return origin + ".";
}

}  // namespace

std::string to_string(CalibratedLink link) {
  switch (link) {
    case CalibratedLink::kVirtualDevice:
      return "link device";
    case CalibratedLink::kVirtualHost:
      return "link host";
    case CalibratedLink::kPeer:
      return "peer";
  }
  return "?";
}

int calibrated_gpu_count(const calibration::CalibrationResult& result) {
  std::set<int> others;
  for (const calibration::CopySeries* series : peer_series(result)) others.insert(series->dst_device);
  return 1 + static_cast<int>(others.size());
}

Machine machine_from_calibration(const calibration::CalibrationResult& result, const CalibratedMachineOptions& options) {
  if (options.name.empty()) throw InputError("--out", "", "a calibrated machine needs a name");
  if (result.device_name.empty()) missing(options, "device.name", "the GPU's name is not given");
  Machine machine;
  machine.name = options.name;
  machine.device = device_from(result, options);
  const Efficiencies efficiencies = fit_efficiencies(result, machine.device);
  machine.device.efficiency = efficiencies.by_key;

  std::string joined;
  switch (options.link) {
    case CalibratedLink::kVirtualDevice:
    case CalibratedLink::kVirtualHost: {
      if (options.devices < 1) throw InputError("--machine-devices", "", "must be at least 1");
      const bool host = options.link == CalibratedLink::kVirtualHost;
      const calibration::CopySeries& series = required_series(result, host ? kHostStaged : kDeviceToDevice, options,
                                                      host ? "the --link host bus" : "the --link device bus");
      machine.devices = options.devices;
      machine.topology = shared_bus(options.devices, series);
      joined = fmt::format(
          "Topology: {} devices carved from this one GPU (`--backend cuda --virtual --{}`) share one bus, at the "
          "{} copy series' fitted rate and latency ({}); host-staged with every device behind one bus is the "
          "format's shared medium, so k copies at once each get 1/k, as they share the GPU's {}. ",
          options.devices, to_string(options.link), series.kind,
          host ? "device -> pinned host -> device, both hops" : "a copy within the GPU",
          host ? "one PCIe link" : "memory");
      break;
    }
    case CalibratedLink::kPeer: {
      const auto peers = peer_series(result);
      if (peers.empty()) {
        missing(options, "copies", "no peer series (this calibration saw one GPU), so there are no peer links");
      }
      const calibration::CopySeries& slowest = *peers.front();
      if (slowest.bandwidth_bytes_per_second <= 0) {
        missing(options, "copies", fmt::format("the peer series to GPU {} has no bandwidth", slowest.dst_device));
      }
      const bool all_p2p = std::all_of(peers.begin(), peers.end(), [](const auto* s) { return s->peer_access; });
      machine.devices = calibrated_gpu_count(result);
      if (all_p2p) {
        machine.topology.kind = TopologyKind::kSwitch;
        machine.topology.link = link_of(slowest);
      } else {
        machine.topology = shared_bus(machine.devices, slowest);
      }
      joined = fmt::format(
          "Topology: the {} GPUs (`--backend cuda`, physical), {}, at the slowest peer series' fitted rate and "
          "latency (GPU {} -> {}; peers were measured from GPU {} only and taken as symmetric). ",
          machine.devices,
          all_p2p ? "peer-to-peer through a switch"
                  : "one shared bus: peer access was off, so the driver stages copies",
          result.device, slowest.dst_device, result.device);
      break;
    }
  }

  // An input pipeline's copies (exec/input_pipeline.hpp) cross the host link
  // as the host-to-device series measured it, from pinned memory.
  if (const calibration::CopySeries* host_to_device = find_series(result, kHostToDevice)) {
    if (host_to_device->bandwidth_bytes_per_second > 0) {
      machine.host_link = link_of(*host_to_device);
      joined += "Host link: the host_to_device copy series' fitted rate and latency (pinned memory). ";
    }
  }

  for (const calibration::OpTime& op : result.op_times) {
    if (op.seconds > 0 && !op.signature.empty()) {
      machine.calibration.op_times_us.emplace(op.signature, op.seconds * 1e6);
    }
  }
  machine.calibration.comment = fmt::format("{} op times measured on {} in {} ({}), medians of {} repeats",
                                            machine.calibration.op_times_us.size(), result.device_name,
                                            machine.device.matrix_math, result.date, result.repeats);

  machine.comment =
      calibration_origin(result, options) + " " + joined +
      (result.partitions > 1
           ? fmt::format("Device: one of {} green-context partitions of the GPU ({} SMs), as measured inside it: ",
                         result.partitions, result.sm_count)
           : std::string("Device: the whole GPU, as measured: ")) +
      "peak_tflops the best GEMM rate of each math; memory bandwidth twice the "
      "device-to-device copy rate (a copy reads and writes every byte); launch overhead the GPU time per empty kernel; "
      "efficiency per op kind the fit that makes the roofline's total over the kind's measured ops their measured "
      "total (" +
      (efficiencies.summary.empty() ? std::string("no op times") : efficiencies.summary) +
      "); the op table prices the ops it lists. " +
      (options.link == CalibratedLink::kPeer ? std::string()
       : result.partitions > 1
           ? fmt::format("It predicts `--virtual` runs on {} devices; the partitions beside the one measured were "
                         "idle, so memory-bound ops had the whole memory bandwidth.",
                         result.partitions)
           : "Limitation: N > 1 virtual devices each get 1/N of the SMs, but these devices are the whole GPU, so "
             "compute-bound ops are predicted up to N times faster than --virtual measures them.");
  check_machine(machine);
  return machine;
}

Machine cpu_machine_from_calibration(const calibration::CalibrationResult& result,
                                     const CalibratedMachineOptions& options) {
  if (options.name.empty()) throw InputError("--out", "", "a calibrated machine needs a name");
  if (result.op_times.empty()) missing(options, "op_times", "no op times: a cpu calibration times the op samples");
  int cores = 1;
  for (const calibration::OpTime& op : result.op_times) cores = std::max(cores, op.shares);
  Machine machine;
  machine.name = options.name;
  machine.devices = cores;
  machine.pooled = true;
  machine.device = device_from(result, options);
  machine.device.name = (result.device_name.empty() ? std::string("CPU") : result.device_name) + ", one thread";
  machine.device.memory_gib /= cores;
  machine.device.sm_count = 0;
  const PooledFits fits = fit_pooled(result, cores, machine.device);
  machine.device.efficiency = fits.efficiency;
  machine.device.contention = fits.contention;
  machine.device.speedup = fits.speedup;
  const std::vector<GemmRatePoint> gemm_rates = calibrated_gemm_rates(result);
  if (!gemm_rates.empty()) {
    // The timed rates price the products by shape: an efficiency of their own would override them.
    machine.device.gemm_rates = gemm_rates;
    for (const OpKind kind : {OpKind::kDense, OpKind::kConv2d}) {
      machine.device.efficiency.erase(std::string(op_def(kind).name));
    }
    for (const auto& [kind, seconds] : result.cell_pointwise_seconds_per_unit) {
      const OpDef* def = computed_kind(kind);
      if (def == nullptr || !def->cell || seconds <= 0) continue;
      machine.device.cell_pointwise_ns[kind] = seconds * 1e9;
      machine.device.efficiency.erase(kind);
    }
    machine.device.kernel_passes = calibrated_pass_rates(result.kernel_passes);
    // One share's part of the cache, as memory_gib is one share's part of the memory; of the cache the
    // products were measured to keep, where that is less than the one the host reports (a VM may report its
    // host's whole cache).
    int64_t cache_bytes = result.last_level_cache_bytes;
    if (result.effective_cache_bytes > 0 && (cache_bytes <= 0 || result.effective_cache_bytes < cache_bytes)) {
      cache_bytes = result.effective_cache_bytes;
    }
    if (cache_bytes > 0 && !result.weight_stream.empty()) {
      machine.device.last_level_cache_mib =
          static_cast<double>(cache_bytes) / (1024.0 * 1024.0) / static_cast<double>(cores);
      for (const calibration::WeightStreamTime& time : result.weight_stream) {
        machine.device.weight_stream.push_back({time.threads, time.running, time.bytes_per_second / 1e9, time.rows});
      }
    }
    // Timed windows price the pools, which their fitted efficiencies would override; their gradients, which
    // ran like them (OpDef::efficiency_like), keep those efficiencies under their own names.
    for (const auto& [kind, ns] : machine.device.kernel_passes.pool_ns_per_window_value) {
      const auto fitted = machine.device.efficiency.find(kind);
      if (fitted == machine.device.efficiency.end()) continue;
      machine.device.efficiency.try_emplace(kind + "_grad", fitted->second);
      machine.device.efficiency.erase(fitted);
    }
  }
  const calibration::CopySeries& copies = required_series(result, kDeviceToDevice, options, "the transfers");
  machine.topology.kind = TopologyKind::kSwitch;
  machine.topology.link = link_of(copies);
  // A copy is a task on its own worker, handed over from the lane that made
  // its input; the compute op reading it is handed over again
  // (lane_handoff_us). Older raw files without that measurement charge the
  // condition-variable hand-off on the copy alone.
  const bool handoff_measured = result.lane_handoff.samples > 0;
  machine.device.lane_handoff_us = handoff_measured ? result.lane_handoff.seconds * 1e6 : 0.0;
  machine.topology.link.latency_us +=
      handoff_measured ? machine.device.lane_handoff_us : result.launch.host_seconds_per_launch * 1e6;
  machine.topology.link.protocol = LinkProtocol::kAchieved;
  // A cpu device's memory is the host's: an input batch is copied at the memcpy rate.
  machine.host_link = link_of(copies);  // `achieved`, as every LinkSpec built in code
  for (const calibration::OpTime& op : result.op_times) {
    if (op.seconds > 0 && !op.signature.empty()) {
      const std::string key = timed_alone(op, cores) ? alone_op_key(op.signature) : op.signature;
      machine.calibration.op_times_us.emplace(pooled_op_key(key, op.shares), op.seconds * 1e6);
    }
  }
  machine.calibration.comment =
      fmt::format("{} op times measured on {} by the cpu backend ({}), each per share count with every device "
                  "running it at once (SIGNATURE) and, where the raw file has them, alone (SIGNATURE|alone), "
                  "medians of {} repeats",
                  machine.calibration.op_times_us.size(), machine.device.name, result.date, result.repeats);
  machine.comment = fmt::format(
      "Calibrated by `splitscope calibrate --backend cpu` on {} at {}: {}, {} hardware threads; raw measurements in "
      "{}. Pooled: one device per hardware thread, a plan on d devices giving each {}/d threads, as the cpu backend "
      "does. Device: one thread: peak_tflops the best one-thread sgemm rate; memory bandwidth twice the memcpy rate "
      "(a copy reads and writes every byte); launch overhead the median gap between consecutive ops of one device "
      "in a run ({:.2f} us; raw files from before it was measured: the hand-off of work between two threads "
      "through a condition variable, {:.1f} us); efficiency per op kind fitted as for GPUs on the one-share op times alone "
      "where measured, else with every device busy ({}); "
      "contention per op kind (KIND|shares=N for devices of N threads) the time-weighted ratio of the op times with "
      "every device busy to the same ops' times alone ({}); speedup per op kind of a device of N threads over one "
      "thread, which prices the ops the table lacks on such a device ({}); op times keyed SIGNATURE|shares=N for devices of N threads; lane "
      "hand-off the median gap between a copy and the compute op on either side of it in a pipelined run ({}). "
      "Topology: a switch at the memcpy series' fitted rate, its latency plus one hand-off (the copying thread "
      "takes the work over). Host link (an input pipeline's copies): the memcpy series' fitted rate and latency.",
      result.host.empty() ? "?" : result.host, result.date.empty() ? "?" : result.date,
      result.device_name.empty() ? "CPU" : result.device_name, cores,
      options.calibration_file.empty() ? "(not kept)" : options.calibration_file, cores,
      machine.device.launch_overhead_us, result.launch.host_seconds_per_launch * 1e6,
      fits.efficiency_summary.empty() ? "none" : fits.efficiency_summary,
      fits.contention_summary.empty() ? "not measured: the raw file has no op times alone" : fits.contention_summary,
      fits.speedup_summary.empty() ? "not said: N for every kind" : fits.speedup_summary,
      handoff_measured ? fmt::format("{:.1f} us over {} gaps", machine.device.lane_handoff_us,
                                     result.lane_handoff.samples)
                       : "not measured: the condition-variable hand-off on each copy instead");
  if (!machine.device.gemm_rates.empty()) {
    std::set<int> thread_counts;
    for (const GemmRatePoint& point : machine.device.gemm_rates) thread_counts.insert(point.threads);
    std::string threads;
    for (const int count : thread_counts) threads += (threads.empty() ? "" : ", ") + std::to_string(count);
    machine.comment += fmt::format(
        " gemm_rates: sgemm rates at {} shapes, a full grid of m, n, k on each of {} thread(s), the kernels' split "
        "over a device's threads, alone and beside the pool's other devices busy; dense and conv2d ops the table lacks (and the cells of cell_pointwise_ns, their "
        "gate arithmetic timed per row and unit on one thread) are priced by the cpu kernels' passes at the rates "
        "of their device's threads (docs/cost-model.md), not by an efficiency{}.",
        machine.device.gemm_rates.size(), threads,
        machine.device.kernel_passes.measured()
            ? "; their bias, activation and im2col passes at the rates kernel_passes timed with the kernels' code"
            : "");
  }
  check_machine(machine);
  return machine;
}

std::vector<CalibratedMachineFile> calibrated_machine_files(const calibration::CalibrationResult& result,
                                                            const std::string& machine_path) {
  namespace fs = std::filesystem;
  const fs::path path(machine_path);
  if (path.extension() != ".json" || path.stem().empty()) {
    throw InputError("--out", "", fmt::format("'{}' must be a .json file name (machine files are JSON)", machine_path));
  }
  const auto beside = [&](const std::string& suffix) {
    return (path.parent_path() / (path.stem().string() + suffix + ".json")).string();
  };
  const std::string stem = path.stem().string();
  std::vector<CalibratedMachineFile> files{{machine_path, stem, CalibratedLink::kVirtualDevice}};
  if (find_series(result, kHostStaged) != nullptr) {
    files.push_back({beside("-link-host"), stem + "-link-host", CalibratedLink::kVirtualHost});
  }
  if (!peer_series(result).empty()) files.push_back({beside("-peer"), stem + "-peer", CalibratedLink::kPeer});
  return files;
}

std::string default_calibration_path(const std::string& machine_path) {
  namespace fs = std::filesystem;
  const fs::path path(machine_path);
  return (path.parent_path() / (path.stem().string() + ".calibration.json")).string();
}

}  // namespace splitscope
