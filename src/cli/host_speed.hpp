#pragma once
/// \file
/// `validate`'s check on the host itself (cpu backend): how fast it runs
/// one-thread sgemm now against the calibrated grid of the machine that
/// predicts it. Prediction errors that follow this ratio are the host's
/// drift since calibration, not the cost model's.

#include <optional>
#include <utility>
#include <vector>

#include "exec/cpu/host_speed_probe.hpp"
#include "sim/costs/gemm_rate_curve.hpp"

namespace splitscope::cli {

/// The median over `timed` (shape, seconds a call now) of the calibrated
/// time of each shape (the one-thread grid timed alone, interpolated as the
/// simulator does) over its time now: 1 as calibrated, 0.9 when the host
/// takes 1/0.9 as long now. nullopt where `rates` have no one-thread grid
/// timed alone (a datasheet or GPU machine) or nothing was timed.
std::optional<double> host_speed_ratio(const std::vector<GemmRatePoint>& rates,
                                       const std::vector<std::pair<SgemmShape, double>>& timed);

/// host_speed_ratio() of `rates` with host_speed_shapes() timed now;
/// nullopt, timing nothing, where `rates` have no such grid.
std::optional<double> host_speed_now(const std::vector<GemmRatePoint>& rates);

}  // namespace splitscope::cli
