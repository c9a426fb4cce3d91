#pragma once
/// \file
/// A simulator Machine from a GPU calibration (calibration::CalibrationResult), so
/// that `--backend sim` predicts what `--backend cuda` measured on that GPU.
/// docs/machine-format.md ("Calibrated machines") says the same for users.
///
/// Every device of the machine is the whole GPU as it was measured:
/// - peak_tflops: per math (fp32, tf32, bf16), the best GEMM rate measured;
///   matrix_math: the math the op times were measured in (`calibrate --dtype`).
/// - memory_bandwidth_GBps: twice the device-to-device copy rate, since a
///   copy of B bytes reads B and writes B bytes of device memory.
/// - launch_overhead_us: the GPU time per empty kernel launched back to back
///   (the host issues asynchronously, ahead of the GPU, so its own time per
///   launch is not added).
/// - efficiency: per op kind measured, the fraction of the roofline that makes
///   the model's total time over that kind's measured ops equal their
///   measured total (a time-weighted fit: big ops weigh most); `default`, for
///   the kinds never measured, is the same fit over the element-wise kinds
///   (everything but dense, conv2d and the recurrent cells), since the
///   unmeasured ones (the all-reduce epilogue, stack, step_slice) are
///   element-wise too; `epilogue` is the fit over relu/tanh/sigmoid where they
///   were measured. A fit above 1 (the kind beats the roofline, e.g. from L2
///   cache reuse) is held at 1.
/// - calibration.op_times_us: every op time measured, by signature; these
///   replace the roofline for their ops.
/// - memory_GiB: the GPU's memory; sm_count: its SMs, as the GPU reported them.
///
/// How the devices are joined depends on what `--backend cuda` does between
/// them (CalibratedLink). One GPU carved into `--virtual` devices has one
/// memory: every copy between two of its devices (`--link device`) uses it,
/// so concurrent copies share its rate; and staged copies (`--link host`)
/// share its one PCIe link. Both are therefore a single shared bus (the
/// host-staged topology with every device behind one bus: k copies at once
/// each get 1/k), at the rate and latency fitted through the
/// device-to-device or the host-staged copy series. A switch would let N
/// concurrent copies run at N times the rate the GPU's memory can move.
///
/// Every device is the GPU as calibrated: the whole GPU, or (`calibrate
/// --partitions N`, CalibrationResult::partitions) one of N green-context
/// partitions timed while the others were idle. The limitation: partitions
/// computing at once share the GPU's L2 and memory, which no device here
/// does, so a plan that keeps N partitions busy is predicted as fast as one
/// busy partition (on an H200, resnet50's convolutions at batch 64 on each of
/// 4 busy partitions took 1.75x their time alone; reports/h200/FINDINGS.md).
/// Only copies share a rate.

#include <string>
#include <vector>

#include "calibration/calibration_result.hpp"
#include "sim/machine/machine.hpp"

namespace splitscope {

/// What joins the devices of a calibrated machine: how `--backend cuda` moves data between them.
enum class CalibratedLink {
  kVirtualDevice,  ///< `--virtual --link device`: copies within the one GPU measured
  kVirtualHost,    ///< `--virtual --link host`: copies staged through pinned host memory
  kPeer,           ///< physical GPUs (no `--virtual`): peer-to-peer copies, from the peer series
};

/// "link device", "link host", "peer"
std::string to_string(CalibratedLink link);

struct CalibratedMachineOptions {
  std::string name;  ///< the machine's name; in models/machines it must be the file's stem
  CalibratedLink link = CalibratedLink::kVirtualDevice;
  /// Virtual links: how many devices the machine has (plans on up to this
  /// many can be simulated). Peer: ignored; the machine has the GPUs measured.
  int devices = 8;
  std::string calibration_file;  ///< where the raw calibration is kept, cited in the comment
  std::string source;            ///< names the calibration in messages ("" = "the calibration")
};

/// The machine `result` describes, joined as `options.link` says. InputError
/// (source: options.source) when the calibration lacks what the machine needs:
/// an fp32 GEMM rate, a GEMM rate in the op times' math, a device-to-device
/// copy series, the series of the link asked for.
Machine machine_from_calibration(const calibration::CalibrationResult& result, const CalibratedMachineOptions& options);

/// This host as `calibrate --backend cpu` measured it (exec/cpu/cpu_calibration.hpp):
/// a pooled machine of one device per core (the largest share count timed),
/// the device one thread: the one-thread sgemm peak, twice the memcpy rate as
/// memory bandwidth, the thread hand-off as launch overhead, efficiencies
/// fitted on the one-share op times alone (else busy), contentions per
/// kind and share count (busy over alone, time-weighted), every op
/// time under pooled_op_key() (alone_op_key() for the times alone); a
/// switch at the memcpy series' rate, its latency plus a hand-off (the copy
/// thread wakes). `options.link` and `options.devices` are not used.
/// InputError as machine_from_calibration(), or without op times.
Machine cpu_machine_from_calibration(const calibration::CalibrationResult& result,
                                     const CalibratedMachineOptions& options);

/// One machine file `calibrate` writes.
struct CalibratedMachineFile {
  std::string path;
  std::string name;  ///< the file's stem
  CalibratedLink link;
};

/// The machine files for `--out machine_path` (which must end in .json):
/// `machine_path` itself for `--link device`; `<stem>-link-host.json` beside
/// it for `--link host` where a host-staged series was measured; and
/// `<stem>-peer.json` for physical GPUs where peer series were measured.
/// Each machine is named after its file's stem.
std::vector<CalibratedMachineFile> calibrated_machine_files(const calibration::CalibrationResult& result,
                                                            const std::string& machine_path);

/// Where the raw calibration goes by default: `machine_path` with `.json`
/// replaced by `.calibration.json`.
std::string default_calibration_path(const std::string& machine_path);

/// The GPUs a calibration covers: the one measured plus every peer it copied to.
int calibrated_gpu_count(const calibration::CalibrationResult& result);

}  // namespace splitscope
