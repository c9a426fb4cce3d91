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
#include "partitioners/op_samples.hpp"
#include "plan/plan.hpp"

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

// The op samples and one-op plans are the partitioners' (op_samples.hpp),
// shared with the cpu calibrator; these names keep the backend's code short.
using splitscope::OpSample;
using splitscope::op_samples_from_graph;
using splitscope::op_samples_from_plans;
using splitscope::single_op_plan;

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
