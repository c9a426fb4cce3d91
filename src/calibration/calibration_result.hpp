#pragma once
/// \file
/// The calibration contract: what a calibrator measured on one device, as
/// plain data. The CUDA backend's calibrator (exec/cuda/calibration.hpp)
/// writes it; the simulator reads it to derive machine files
/// (sim/machine/calibrated_machine.hpp); calibration_file.hpp reads and writes it as
/// JSON (schema "splitscope.calibration/1"). Like the Plan and the Timeline,
/// it is a contract of its own, so that no stage that reads measurements
/// depends on the backend that took them.
///
/// Units: seconds, bytes, FLOPs (2 per multiply-add), bytes/s, FLOP/s.
/// Times are medians over the repeats, after warm-up.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace splitscope::calibration {

/// The value of a calibration file's "schema" field.
inline constexpr std::string_view kCalibrationSchema = "splitscope.calibration/1";

/// One matrix-product shape: C[m, n] = A[m, k] · B[k, n], float32 storage.
struct GemmRate {
  int64_t m = 0, n = 0, k = 0;
  std::string math;             ///< "fp32", "tf32" or "bf16" (the cuBLAS compute type)
  double seconds = 0;           ///< median time of one product
  double flops_per_second = 0;  ///< 2·m·n·k / seconds
  /// cpu: the threads the product was split over, as the kernels' gemm()
  /// splits it (exec/cpu/kernels/gemm.hpp); 1 for one thread, and for GPUs.
  int threads = 1;
  /// cpu: how many devices were running a product of this shape at once, its
  /// own included: 1 alone, cores / threads with every device of the pool busy.
  int running = 1;
};

/// One copy size of a series.
struct CopyPoint {
  int64_t bytes = 0;
  double seconds = 0;           ///< median
  double bytes_per_second = 0;  ///< bytes / seconds
};

/// Copies of one kind over sizes, with the line t = latency + bytes / bandwidth
/// fitted through them (least squares, calibration_fits.hpp).
struct CopySeries {
  /// "device_to_device" (within the GPU), "host_to_device", "device_to_host"
  /// (pinned host memory), "host_staged" (device -> pinned host -> device, the
  /// two hops of `--link host`), "peer" (cudaMemcpyPeerAsync to `dst_device`).
  std::string kind;
  int src_device = 0;
  int dst_device = 0;
  bool peer_access = false;  ///< peer: whether P2P access was enabled (else the driver stages it)
  std::vector<CopyPoint> points;
  double latency_seconds = 0;
  double bandwidth_bytes_per_second = 0;
};

struct LaunchOverhead {
  int kernels = 0;                       ///< empty kernels launched back to back
  double host_seconds_per_launch = 0;    ///< CPU time to issue one launch
  double device_seconds_per_kernel = 0;  ///< GPU time per empty kernel in the stream (event to event / count)
};

/// The time from one lane of a device finishing a value to a dependent op
/// starting on another lane (a copy after its producer, a compute op after
/// the copy that brought its input), read off the executor's own timeline
/// of a pipelined plan. cpu: a worker handing work to another (spinning or
/// parked, as runs leave them); GPU: not measured yet (0).
struct LaneHandoff {
  int samples = 0;
  double seconds = 0;  ///< median
};

/// cpu: a worker handing a task to one that had gone to sleep (idle past
/// the scheduler's spin window), off the scheduler's own timings. On a
/// virtual machine it includes waking the halted vCPU. Recorded, not priced
/// yet: docs/cost-model.md says why.
struct ParkedHandoff {
  int samples = 0;
  double seconds = 0;       ///< median
  double spin_seconds = 0;  ///< how long a worker idles, looking for work, before it sleeps
};

/// cpu: im2col on a pool of `threads` (exec/cpu/kernels/conv2d.hpp): a call
/// takes `seconds_per_call` + `seconds_per_value` per value of the patch
/// matrix, the line through two geometries' medians.
struct Im2colTime {
  int threads = 1;
  double seconds_per_value = 0;
  double seconds_per_call = 0;
};

/// cpu: the kernels' passes other than products, timed with the kernels'
/// own code: a bias copied into output rows and each activation in place
/// ("relu", "tanh", "sigmoid") on one thread, per value; im2col on each share
/// count's threads; each pooling kind on one thread, per window element.
/// Empty `im2col`: not measured (GPU, older files).
struct KernelPassTimes {
  double fill_seconds_per_value = 0;
  std::map<std::string, double> activation_seconds_per_value;
  std::vector<Im2colTime> im2col;
  /// By pooling kind ("maxpool", "avgpool"), one thread, per output value and window element; empty: not timed.
  std::map<std::string, double> pool_seconds_per_window_value;
  bool measured() const { return !im2col.empty(); }
};

/// cpu: a product of `rows` rows streaming its weights from memory (B of
/// (rows, 4096, 1024) products, each call on another B of a set several times
/// the last-level cache) on a pool device of `threads`, with `running`
/// devices doing the same: B's bytes over the call. Files from before rows
/// were timed hold 8-row products only.
struct WeightStreamTime {
  int threads = 1;
  int running = 1;
  double bytes_per_second = 0;
  int64_t rows = 8;
};

/// What one device step costs the host thread that issues an eager run
/// (sim/costs/host_issue.hpp), measured the way a run issues: a chain of tiny ops
/// compiled and issued by the executor itself, with its timing observer
/// attached, host wall time over the steps issued. GPU only; 0 unmeasured.
struct HostIssue {
  int steps = 0;                ///< device steps per issue of the probe plan
  double seconds_per_step = 0;  ///< median over the repeats
};

/// The measured time of one op slice shape.
struct OpTime {
  std::string signature;  ///< op_signature(): the simulator's key
  std::string example;    ///< "network/node" it was measured from
  int64_t flops = 0;
  int64_t bytes = 0;      ///< bytes read + written (slice_cost)
  double seconds = 0;     ///< median
  double min_seconds = 0;
  double max_seconds = 0;
  /// cpu: the device it ran on had this many shares of the pooled cores (its
  /// threads). 1 for GPUs.
  int shares = 1;
  /// How many devices were running this op at once while it was timed, its
  /// own included: 1 alone (the other devices idle), cores / shares with
  /// every device of the pool busy. 0: the file does not say (written before
  /// this field), which for a cpu calibration means every device busy and
  /// for a GPU one alone.
  int running = 0;
};

/// The rate of one timed convolution shape (from its op time).
struct ConvRate {
  std::string signature;  ///< op_signature() of the conv2d slice
  double seconds = 0;
  double flops_per_second = 0;
};

struct CalibrationResult {
  std::string schema{kCalibrationSchema};
  std::string date;         ///< ISO 8601, UTC
  std::string host;
  int device = 0;
  std::string device_name;
  int sm_count = 0;                ///< of the partition measured, when partitions > 1
  int partitions = 1;              ///< >1: measured inside one of this many green-context partitions
  int64_t memory_bytes = 0;
  std::string compute_capability;  ///< "9.0"
  std::string driver;              ///< CUDA driver API version, "13.0"
  std::string runtime;             ///< CUDA runtime version
  std::string cublas;
  std::string cudnn;
  std::string dtype;               ///< the math the op times used
  int repeats = 0;
  std::vector<GemmRate> gemm;
  std::vector<CopySeries> copies;
  LaunchOverhead launch;
  LaneHandoff lane_handoff;
  ParkedHandoff parked_handoff;  ///< 0 samples: unmeasured
  HostIssue host_issue;
  std::vector<OpTime> op_times;
  std::vector<ConvRate> conv;      ///< conv_rates(op_times)
  std::vector<std::string> notes;  ///< what could not be measured, and why
  /// cpu: the op kinds whose kernel runs on one thread however many threads
  /// its device has (the executor's kernel table), so that a device of N
  /// shares runs them no faster than one. Empty: not said (GPU, older files).
  std::vector<std::string> one_thread_kinds;
  /// cpu: per recurrent cell kind ("lstm_cell", "gru_cell"), one thread's
  /// time per (row, hidden unit) of the cell's gate arithmetic after its
  /// products (exec/cpu/kernels/recurrent_cell.hpp, *_cell_pointwise).
  /// Empty: not measured (GPU, older files).
  std::map<std::string, double> cell_pointwise_seconds_per_unit;
  KernelPassTimes kernel_passes;  ///< cpu only
  /// cpu: the host's last-level cache (sysfs), bytes; 0: not known.
  int64_t last_level_cache_bytes = 0;
  /// cpu: the largest set of weights that products still read at the
  /// cache's speed, cycling over it as a network's layers do (a VM may
  /// report its host's whole cache, of which it gets a part); 0: not measured.
  int64_t effective_cache_bytes = 0;
  std::vector<WeightStreamTime> weight_stream;  ///< cpu only; empty: not measured
};

}  // namespace splitscope::calibration
