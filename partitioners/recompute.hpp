#pragma once
/// \file
/// GPipe's re-materialisation (`--recompute`), as a pass over a finished
/// training plan of any strategy: each device keeps, of a micro-batch's
/// forward pass, only what it did not compute itself (the stage's input
/// received from the previous stage, gathered or reduced tensors, network
/// inputs, weights, the plan's outputs), and runs its forward compute ops of
/// that micro-batch again just before the micro-batch's first backward op on
/// that device, so that the backward reads the re-run's values. The
/// forward's own values then die at their last forward reader instead of
/// living through the backward: the stash of every micro-batch in flight
/// shrinks to its stage inputs, and one micro-batch's activations are alive
/// at a time, for one more forward pass of FLOPs (Huang et al., GPipe, 2019,
/// section 2.3; torchgpipe's checkpointing).
///
/// Only the forward ops whose values the backward reads, directly or through
/// other re-run ops, run again. Each re-run is a compute op with
/// PlanOp::recomputes naming its original; plan_check holds it to that.
/// Executors and the simulator run it as any compute op, so its FLOPs and
/// time count (as forward time) and its outputs equal the original's.

#include "plan/plan.hpp"

namespace splitscope {

/// `plan` with its forward passes re-run for the backward; its memory
/// recomputed. std::logic_error for a plan of no training graph.
Plan recompute_activations(Plan plan);

}  // namespace splitscope
