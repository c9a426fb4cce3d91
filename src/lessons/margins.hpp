#pragma once
/// \file
/// The margins the lessons' verdicts use (docs/lessons.md): a split gains
/// where `compare` calls it a win (report/judgement.hpp, 1.05x), and a
/// difference inside that margin of even is `uncertain` where a lesson says
/// so (the simulator's prediction error on the GPUs we measured is larger
/// than that: docs/cost-model.md).

#include "report/judgement.hpp"

namespace splitscope {

inline constexpr double kGainMargin = kWinSpeedup;          ///< a speedup at or above this gains
inline constexpr double kUncertainMargin = kWinSpeedup - 1;  ///< |speedup - 1| below this is uncertain
inline constexpr double kEfficientScaling = 0.8;            ///< data parallelism is efficient at 80% of linear

}  // namespace splitscope
