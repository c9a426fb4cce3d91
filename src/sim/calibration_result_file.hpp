#pragma once
/// \file
/// A recorded calibration (schema "splitscope.calibration/1", what
/// gpu::calibration_to_json() writes and `splitscope calibrate` keeps beside
/// its machine files) read back whole, as the gpu::CalibrationResult it was
/// written from, so that machine files can be derived again from old
/// measurements on a machine without a GPU (`splitscope calibrate --from
/// FILE`); deriving a whole machine (sim/calibrated_machine.hpp) needs
/// everything: every GEMM rate, every copy series, each op's FLOPs and
/// bytes. Every problem is an InputError
/// `<file>: <json path>: <problem>`, e.g. `c.json: copies[2].points[0].bytes:
/// must be positive, got 0`.
///
/// parse_calibration_result(calibration_to_json(r)) gives r back, field for field.

#include <string>
#include <string_view>

#include "exec/cuda/calibration.hpp"

namespace splitscope {

/// The value of a calibration file's "schema" field.
inline constexpr std::string_view kCalibrationSchema = "splitscope.calibration/1";

/// Parses a calibration from JSON text; `source` names it in messages.
gpu::CalibrationResult parse_calibration_result(std::string_view text, const std::string& source);

/// Reads a calibration file; InputError when it cannot be opened or read.
gpu::CalibrationResult load_calibration_result(const std::string& path);

}  // namespace splitscope
