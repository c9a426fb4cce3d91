#pragma once
/// \file
/// The calibration contract's file format (schema "splitscope.calibration/1"):
/// what `splitscope calibrate` keeps beside its machine files, written by
/// calibration_to_json() and read back whole by parse_calibration_result(),
/// so that machine files can be derived again from old measurements on a
/// machine without a GPU (`splitscope calibrate --from FILE`); deriving a
/// whole machine (sim/machine/calibrated_machine.hpp) needs everything: every GEMM
/// rate, every copy series, each op's FLOPs and bytes. Every problem is an
/// InputError `<file>: <json path>: <problem>`, e.g. `c.json:
/// copies[2].points[0].bytes: must be positive, got 0`.
///
/// parse_calibration_result(calibration_to_json(r)) gives r back, field for field.

#include <string>
#include <string_view>

#include "calibration/calibration_result.hpp"

namespace splitscope::calibration {

/// The result as JSON (schema "splitscope.calibration/1"), two-space indented.
std::string calibration_to_json(const CalibrationResult& result);

/// Parses a calibration from JSON text; `source` names it in messages.
CalibrationResult parse_calibration_result(std::string_view text, const std::string& source);

/// Reads a calibration file; InputError when it cannot be opened or read.
CalibrationResult load_calibration_result(const std::string& path);

}  // namespace splitscope::calibration
