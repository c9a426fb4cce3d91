#pragma once
/// \file
/// The drivers: a plan run in its mode (run_request.hpp) on any Executor,
/// one driver per mode, written once for every command (`run`, `compare`,
/// `validate`, `sweep`, `collective`, `demo`, the MPI ranks). A command
/// builds a RunRequest and calls run_plan() for one plan, or run_plans()
/// for a baseline and the plans judged against it.

#include <memory>
#include <vector>

#include "exec/executor.hpp"
#include "plan/plan.hpp"
#include "report/progress.hpp"
#include "run/interleaved_runs.hpp"
#include "run/run_request.hpp"

namespace splitscope {

/// `plan` run on `executor` as `request` asks (run_mode()).
RunResult run_plan(Executor& executor, const Plan& plan, const RunRequest& request);

/// `plans` (the baseline first) on `executor`, their results in `plans`
/// order. Forward runs interleave the baseline's repeats with each plan's
/// (interleaved_runs.hpp), by `policy`; so do training steps, each step
/// one timed repeat (no warm-up, a fixed count: `request.steps`; their
/// losses are not read). Input streams run one plan after the other: each
/// step's period depends on the steps around it, so repeats cannot
/// interleave.
std::vector<RunResult> run_plans(Executor& executor, const std::vector<std::shared_ptr<const Plan>>& plans,
                                 const RunRequest& request, Progress& progress, RepeatPolicy policy = {});

}  // namespace splitscope
