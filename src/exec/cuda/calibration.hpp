#pragma once
/// \file
/// Calibration: what one GPU measurably does, for the simulator to use.
/// calibrate_device() measures, on one device, matrix-product rates over
/// shapes, copy bandwidth and latency over sizes (within the device, host to
/// device and back, host-staged as `--link host` copies, and peer-to-peer to
/// another GPU where there is one), kernel launch overhead, and the time of
/// every op slice it is given (keyed by op_signature(), the key the
/// simulator's calibration table uses), into the calibration contract's
/// CalibrationResult (src/calibration), whose calibration_to_json() writes it.
///
/// Units: seconds, bytes, FLOPs (2 per multiply-add), bytes/s, FLOP/s.
/// Times are medians over the repeats, from CUDA events, after warm-up.
/// Without a GPU (or in a build without CUDA) calibrate_device() throws
/// UnavailableError (exit 3).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "calibration/calibration_fits.hpp"
#include "calibration/calibration_file.hpp"
#include "calibration/calibration_result.hpp"
#include "ir/graph.hpp"
#include "ir/slice.hpp"
#include "partitioners/plan.hpp"

namespace splitscope::gpu {

/// The measured-rates types are the calibration contract's
/// (calibration/calibration_result.hpp), which this calibrator writes and
/// the simulator reads; these names keep the backend's own code short.
using calibration::CalibrationResult;
using calibration::ConvRate;
using calibration::CopyPoint;
using calibration::CopySeries;
using calibration::GemmRate;
using calibration::LaunchOverhead;
using calibration::OpTime;
using calibration::calibration_to_json;
using calibration::conv_rates;
using calibration::fit_copy_series;
using calibration::fit_line;
using calibration::LinearFit;
using calibration::median;

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
  int partitions = 1;          ///< >1: measure inside one of this many green-context partitions
  uint64_t seed = 0;
  std::vector<OpSample> ops;
};

/// Measures device `options.device`. UnavailableError without a GPU.
CalibrationResult calibrate_device(const CalibrationOptions& options);

}  // namespace splitscope::gpu
