#pragma once
/// \file
/// How sure a measured speedup is: a 95% interval for the ratio of two
/// medians (baseline / run), by the percentile bootstrap (Efron & Tibshirani,
/// "An Introduction to the Bootstrap", ch. 13): both sets of repeats are
/// resampled with replacement, the ratio of the medians taken each time, and
/// the 2.5th and 97.5th percentiles of those ratios kept. The median and the
/// bootstrap assume nothing about the shape of the noise, which on a shared
/// machine is skewed (a run is only ever slowed down). The resampling uses a
/// fixed seed, so the same repeats give the same interval.

#include <optional>
#include <vector>

namespace splitscope {

struct SpeedupInterval {
  double low = 0;
  double high = 0;
};

/// Fewer repeats than this on either side give no interval (with two, the
/// bootstrap has almost nothing to resample).
inline constexpr int kMinRepeatsForInterval = 3;

/// The interval of median(baseline_ms) / median(run_ms); nullopt with fewer
/// than kMinRepeatsForInterval values on either side.
std::optional<SpeedupInterval> speedup_interval(const std::vector<double>& baseline_ms,
                                                const std::vector<double>& run_ms);

}  // namespace splitscope
