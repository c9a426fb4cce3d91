#pragma once
/// \file
/// A warning when the repeats of a measured run varied too much to trust
/// small differences, as pyperf and hyperfine warn: pyperf flags a result
/// whose standard deviation is above 10% of its mean ("the benchmark seems
/// unstable"); the same rule here, on each measured run of a comparison.

#include <optional>
#include <string>

#include "report/comparison.hpp"

namespace splitscope {

/// Relative standard deviation (standard deviation / mean) above which a run
/// is called unstable (pyperf's threshold).
inline constexpr double kUnstableSpread = 0.10;

/// One paragraph naming the unstable measured runs (the worst first) and what
/// to do; nullopt when every measured run of 3 or more repeats was stable, or
/// nothing was measured.
std::optional<std::string> noise_warning(const Comparison& comparison);

}  // namespace splitscope
