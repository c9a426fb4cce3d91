#pragma once
/// \file
/// The step between an axis's ticks, shared by every chart the pages draw
/// (timelines, sweeps, flips): 1, 2 or 5 times a power of ten, so ticks read
/// 0, 20, 40 ... rather than 0, 17.3, 34.6.

namespace splitscope {

/// The smallest step of 1, 2 or 5 times a power of ten that covers `range`
/// in at most about `target` ticks (`range` > 0).
double nice_tick_step(double range, int target);

}  // namespace splitscope
