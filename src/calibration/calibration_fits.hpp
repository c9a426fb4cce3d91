#pragma once
/// \file
/// The numbers a calibrator derives from its raw timings: line fits through
/// copy series, medians, and convolution rates. Pure functions on the
/// calibration contract (calibration_result.hpp), so that every calibrator
/// derives them the same way.

#include <vector>

#include "calibration/calibration_result.hpp"

namespace splitscope::calibration {

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

}  // namespace splitscope::calibration
