#pragma once
/// \file
/// The order in which one pipeline stage runs the forward and backward passes
/// of its micro-batches in a training step, as a closed form:
/// - GPipe: F0 … F(M-1), then B0 … B(M-1): every micro-batch's activations
///   are stashed at once.
/// - 1F1B (PipeDream-Flush): stage s of N first runs w = min(N-1-s, M)
///   forwards (warm-up), then alternates one forward and one backward, then
///   runs the remaining backwards (cool-down): at most w+1 ≤ N micro-batches
///   in flight on the first stage, against GPipe's M.
/// Both give the same bubble, (N-1)/(M+N-1) of a balanced pipeline.

#include <vector>

#include "ir/op.hpp"
#include "plan/plan.hpp"

namespace splitscope {

/// One pass of one micro-batch on a stage.
struct StagePass {
  Pass pass = Pass::kForward;
  int microbatch = 0;
  bool operator==(const StagePass&) const = default;
};

/// The sequence stage `stage` of `stages` runs for `microbatches` micro-batches.
std::vector<StagePass> stage_sequence(PipelineSchedule schedule, int stage, int stages, int microbatches);

/// The most micro-batches whose forward has run and backward has not, at any
/// point of the sequence (the activation stash, in micro-batches).
int peak_in_flight(const std::vector<StagePass>& sequence);

}  // namespace splitscope
