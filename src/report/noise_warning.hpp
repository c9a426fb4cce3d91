#pragma once
/// \file
/// A warning when the repeats of a measured run varied too much to trust
/// small differences, as pyperf and hyperfine warn: pyperf flags a result
/// whose standard deviation is above 10% of its mean ("the benchmark seems
/// unstable"); the same rule here, on each measured run of a comparison.

#include <optional>
#include <string>
#include <vector>

#include "report/comparison.hpp"

namespace splitscope {

/// Relative standard deviation (standard deviation / mean) above which a run
/// is called unstable (pyperf's threshold).
inline constexpr double kUnstableSpread = 0.10;

/// One paragraph naming the unstable measured runs (the worst first) and what
/// to do; nullopt when every measured run of 3 or more repeats was stable, or
/// nothing was measured.
std::optional<std::string> noise_warning(const Comparison& comparison);

/// A measured run's name ("cnn horizontal on 2", "4096 B") and the times of its repeats (ms).
struct RepeatTimes {
  std::string name;
  std::vector<double> repeat_ms;
};

/// The same warning for any measured runs (validate's cases, collective's
/// sizes); `advice`: what to do about it in that command.
std::optional<std::string> noise_warning(const std::vector<RepeatTimes>& runs, const std::string& advice);

}  // namespace splitscope
