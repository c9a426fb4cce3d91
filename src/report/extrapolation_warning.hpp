#pragma once
/// \file
/// A warning when a prediction on a calibrated machine comes mostly from
/// outside its table of measured op times. Those ops are priced from their
/// shapes: on a cpu machine with a timed sgemm grid by the kernels' passes
/// at its rates, else by their kind's efficiency, fitted on the calibrated
/// ops' shapes, which can be several times off for shapes far from them: a
/// host calibrated on the small networks (the default) predicted resnet50
/// `single` at 25.5 s against 5.3 s measured by efficiencies, every
/// convolution priced at the efficiency of convolutions a thousand times
/// smaller (docs/cost-model.md, "Which source prices an op").

#include <optional>
#include <string>

#include "report/comparison.hpp"

namespace splitscope {

/// Below this share of the predicted compute time from measured op times, a
/// prediction is mostly extrapolated.
inline constexpr double kMostlyCalibrated = 0.5;

/// Whether a prediction with this RunInfo::calibrated_share is mostly
/// extrapolated: it ran on a machine with measured op times and took under
/// kMostlyCalibrated of its compute time from them.
inline bool mostly_extrapolated(const std::optional<double>& calibrated_share) {
  return calibrated_share && *calibrated_share < kMostlyCalibrated;
}

/// One paragraph naming the predicted runs whose compute time came less than
/// kMostlyCalibrated from the machine's measured op times, and what to do;
/// nullopt when every predicted run on a calibrated machine came mostly from
/// them, or none ran on one.
std::optional<std::string> extrapolation_warning(const Comparison& comparison);

}  // namespace splitscope
