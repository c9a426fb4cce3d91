#pragma once
/// \file
/// Which measurement a cpu calibration is at (`calibrate --backend cpu`, the
/// first `--machine host`), on one line of stderr that is redrawn at each
/// stage and cleared at the end: a terminal only, so logs get the results.

#include <cstddef>
#include <functional>
#include <string>

namespace splitscope::cli {

class CalibrationProgress {
 public:
  /// `what` begins the line, e.g. "calibrating this host".
  explicit CalibrationProgress(std::string what);
  ~CalibrationProgress();
  CalibrationProgress(const CalibrationProgress&) = delete;
  CalibrationProgress& operator=(const CalibrationProgress&) = delete;

  /// For CpuCalibrationOptions::on_stage.
  std::function<void(const std::string& stage, int index, int stages)> callback();

 private:
  std::string what_;
  bool enabled_;
  size_t shown_width_ = 0;
};

}  // namespace splitscope::cli
