#pragma once
/// \file
/// The most ops one plan may have. The op limit of a network
/// (ir/model_limits.hpp) bounds its graph; a strategy multiplies it (a layer
/// split over D devices is D ops, plus their transfers), so a plan is held to
/// a limit of its own, checked as it is built: a 100,000-layer chain split
/// over 64 devices is refused in well under a second instead of filling the
/// memory. docs/limits.md lists every limit.

#include <cstdint>

#include "plan/plan.hpp"

namespace splitscope {

/// 2^21 ops (twice a network's 2^20): a plan's ops and values take about
/// 1.5 GB by then (measured: a 20,000-layer chain split over 64 devices,
/// training, refused at 2^22 ops held 2.9 GB).
inline constexpr int64_t kMaxPlanOps = int64_t{1} << 21;

/// InputError (blamed on --devices) when `plan`, being built, would reach
/// `ops` ops (or op placements) past kMaxPlanOps.
void check_plan_ops(const Plan& plan, int64_t ops);

}  // namespace splitscope
