#pragma once
/// \file
/// Calibration: what one GPU measurably does, for the simulator to use.
/// calibrate_device() measures, on one device, matrix-product rates over
/// shapes, copy bandwidth and latency over sizes (within the device, host to
/// device and back, host-staged as `--link host` copies, and peer-to-peer to
/// another GPU where there is one), kernel launch overhead, and the time of
/// every op slice it is given (keyed by op_signature(), the key the
/// simulator's calibration table uses). calibration_to_json() writes it.
///
/// Units: seconds, bytes, FLOPs (2 per multiply-add), bytes/s, FLOP/s.
/// Times are medians over the repeats, from CUDA events, after warm-up.
/// Without a GPU (or in a build without CUDA) calibrate_device() throws
/// UnavailableError (exit 3).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/slice.hpp"
#include "partitioners/plan.hpp"

namespace splitscope::gpu {

/// One matrix-product shape: C[m, n] = A[m, k] · B[k, n], float32 storage.
struct GemmRate {
  int64_t m = 0, n = 0, k = 0;
  std::string math;         ///< "fp32", "tf32" or "bf16" (the cuBLAS compute type)
  double seconds = 0;       ///< median time of one product
  double flops_per_second = 0;  ///< 2·m·n·k / seconds
};

/// One copy size of a series.
struct CopyPoint {
  int64_t bytes = 0;
  double seconds = 0;           ///< median
  double bytes_per_second = 0;  ///< bytes / seconds
};

/// Copies of one kind over sizes, with the line t = latency + bytes / bandwidth
/// fitted through them (least squares).
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
  int kernels = 0;                      ///< empty kernels launched back to back
  double host_seconds_per_launch = 0;   ///< CPU time to issue one launch
  double device_seconds_per_kernel = 0; ///< GPU time per empty kernel in the stream (event to event / count)
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
};

/// The rate of one timed convolution shape (from its op time).
struct ConvRate {
  std::string signature;  ///< op_signature() of the conv2d slice
  double seconds = 0;
  double flops_per_second = 0;
};

struct CalibrationResult {
  std::string schema = "splitscope.calibration/1";
  std::string date;         ///< ISO 8601, UTC
  std::string host;
  int device = 0;
  std::string device_name;
  int sm_count = 0;
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
  std::vector<OpTime> op_times;
  std::vector<ConvRate> conv;      ///< conv_rates(op_times)
  std::vector<std::string> notes;  ///< what could not be measured, and why
};

/// One op slice to time: `slice` of `node` in `graph`.
struct OpSample {
  std::shared_ptr<const Graph> graph;
  NodeId node = 0;
  Slice slice;
  std::string signature;
};

/// The distinct op slices (by signature) of the compute ops of `plans`.
std::vector<OpSample> op_samples_from_plans(const std::vector<Plan>& plans);

/// The distinct op slices of `graph` that its splits produce: every op whole,
/// split evenly along its output channels into each of `channel_splits`
/// parts, and over each of `batch_splits` equal parts of the batch (pipeline
/// micro-batches). Grouped convolutions split along whole groups where the
/// split allows it, as the vertical strategy does.
std::vector<OpSample> op_samples_from_graph(const std::shared_ptr<const Graph>& graph,
                                            const std::vector<int>& channel_splits,
                                            const std::vector<int>& batch_splits);

/// A one-device plan of one compute op: `sample`'s slice, its inputs given
/// (values with no producer, holding exactly the channels the op reads), its
/// outputs the plan's outputs. Calibration times each sample this way.
Plan single_op_plan(const OpSample& sample);

struct CalibrationOptions {
  int device = 0;
  std::string dtype = "fp32";  ///< math for op times: fp32, tf32, bf16
  int warmup = 3;
  int repeats = 20;
  bool quick = false;          ///< fewer shapes and sizes (for tests and smoke runs)
  uint64_t seed = 0;
  std::vector<OpSample> ops;
};

/// Measures device `options.device`. UnavailableError without a GPU.
CalibrationResult calibrate_device(const CalibrationOptions& options);

/// y = intercept + slope · x by least squares (the two are 0 for fewer than two points).
struct LinearFit {
  double intercept = 0;
  double slope = 0;
};
LinearFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

/// Fits latency and bandwidth through a series' points; a non-positive slope
/// (bandwidth beyond measurement) leaves the bandwidth at the largest point's rate.
void fit_copy_series(CopySeries& series);

/// The convolutions among `op_times`, as FLOP rates (cuDNN's, with the
/// algorithm it picked for the dtype).
std::vector<ConvRate> conv_rates(const std::vector<OpTime>& op_times);

/// Median of `values` (the mean of the middle two for an even count; 0 if empty).
double median(std::vector<double> values);

/// The result as JSON (schema "splitscope.calibration/1"), two-space indented.
std::string calibration_to_json(const CalibrationResult& result);

}  // namespace splitscope::gpu
