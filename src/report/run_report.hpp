#pragma once
/// \file
/// RunReport: one run with everything any report needs about it: its plan
/// (op names, memory), the timeline of its representative repeat (traces and
/// pictures), its summary (numbers) and its judgement (speedup, verdict, reason).

#include <memory>

#include "plan/plan.hpp"
#include "report/judgement.hpp"
#include "report/run_summary.hpp"
#include "timeline/run_result.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

struct RunReport {
  std::shared_ptr<const Plan> plan;
  Timeline timeline;  ///< the representative repeat; empty when the run was not timed
  RunSummary summary;
  Judgement judgement;
};

/// Summarizes `result` (a run of `plan`) and judges it against `baseline`
/// (the `single` run of the same network on the same backend and machine;
/// null when there is none, or when this run is that baseline).
RunReport make_run_report(std::shared_ptr<const Plan> plan, const RunResult& result,
                          const RunSummary* baseline);

}  // namespace splitscope
