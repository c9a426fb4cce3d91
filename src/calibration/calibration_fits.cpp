// Line fits, medians and convolution rates from a calibrator's raw timings.
#include "calibration/calibration_fits.hpp"

#include "util/median.hpp"

#include <algorithm>

namespace splitscope::calibration {

LinearFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  LinearFit fit;
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return fit;
  double mean_x = 0;
  double mean_y = 0;
  for (size_t i = 0; i < n; ++i) {
    mean_x += x[i];
    mean_y += y[i];
  }
  mean_x /= static_cast<double>(n);
  mean_y /= static_cast<double>(n);
  double sxx = 0;
  double sxy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mean_x) * (x[i] - mean_x);
    sxy += (x[i] - mean_x) * (y[i] - mean_y);
  }
  if (sxx == 0) return fit;
  fit.slope = sxy / sxx;
  fit.intercept = mean_y - fit.slope * mean_x;
  return fit;
}

void fit_copy_series(CopySeries& series) {
  std::vector<double> bytes;
  std::vector<double> seconds;
  for (const CopyPoint& point : series.points) {
    bytes.push_back(static_cast<double>(point.bytes));
    seconds.push_back(point.seconds);
  }
  const LinearFit fit = fit_line(bytes, seconds);
  series.latency_seconds = std::max(0.0, fit.intercept);
  if (fit.slope > 0) {
    series.bandwidth_bytes_per_second = 1.0 / fit.slope;
  } else if (!series.points.empty()) {
    series.bandwidth_bytes_per_second = series.points.back().bytes_per_second;
  }
}

std::vector<ConvRate> conv_rates(const std::vector<OpTime>& op_times) {
  std::vector<ConvRate> rates;
  for (const OpTime& op : op_times) {
    if (op.signature.rfind("conv2d:", 0) != 0 || op.seconds <= 0) continue;
    rates.push_back(ConvRate{op.signature, op.seconds, static_cast<double>(op.flops) / op.seconds});
  }
  return rates;
}

double median(std::vector<double> values) { return splitscope::median(std::move(values)); }

}  // namespace splitscope::calibration
