#include "report/comparison.hpp"

#include <algorithm>

#include "util/check.hpp"

namespace splitscope {
namespace {

/// Fitting runs by median makespan, then those that do not fit; stable otherwise.
bool runs_before(const RunReport& a, const RunReport& b) {
  if (a.summary.timed() != b.summary.timed()) return a.summary.timed();
  if (!a.summary.timed()) return false;
  return a.summary.makespan->median_ms < b.summary.makespan->median_ms;
}

}  // namespace

const RunGroup& Comparison::primary() const {
  SPLITSCOPE_CHECK(!groups.empty(), "a comparison without runs has no primary group");
  return groups.front();
}

std::vector<const RunReport*> Comparison::all_runs() const {
  std::vector<const RunReport*> runs;
  for (const RunGroup& group : groups) {
    for (const RunReport& run : group.runs) runs.push_back(&run);
  }
  return runs;
}

ComparisonBuilder::ComparisonBuilder(ReportContext context) : context_(std::move(context)) {}

void ComparisonBuilder::add(std::shared_ptr<const Plan> plan, const RunResult& result, bool shown) {
  SPLITSCOPE_CHECK(plan != nullptr, "a run needs its plan");
  // Reports need the timelines and the run info, not the output tensor.
  Pending run{std::move(plan), RunResult{{}, result.timelines, result.info, result.losses}, shown};
  for (auto& group : groups_) {
    const RunInfo& info = group.front().result.info;
    if (info.backend == result.info.backend && info.machine_name == result.info.machine_name) {
      group.push_back(std::move(run));
      return;
    }
  }
  groups_.emplace_back();
  groups_.back().push_back(std::move(run));
}

Comparison ComparisonBuilder::build() && {
  Comparison comparison;
  comparison.context = std::move(context_);
  for (auto& pending : groups_) {
    RunGroup group;
    group.backend = pending.front().result.info.backend;
    group.machine = pending.front().result.info.machine_name;
    group.measured = pending.front().result.info.measured;
    std::optional<RunSummary> replicated;
    for (const Pending& run : pending) {
      if (run.plan->traits.baseline && !group.baseline) group.baseline = summarize(*run.plan, run.result);
      if (run.plan->traits.replicated && run.plan->graph->is_training() && !replicated) {
        replicated = summarize(*run.plan, run.result);
      }
    }
    const RunSummary* baseline = group.baseline ? &*group.baseline : nullptr;
    // Training: a model split must beat data parallelism too, so each is
    // judged against the faster of `single` and `data` (data itself against single).
    const RunSummary* bar = baseline;
    if (replicated && replicated->timed() && baseline != nullptr && baseline->timed() &&
        replicated->makespan->median_ms < baseline->makespan->median_ms) {
      bar = &*replicated;
    }
    for (Pending& run : pending) {
      if (!run.shown) continue;
      const RunSummary* against = run.plan->traits.replicated || run.plan->traits.baseline ? baseline : bar;
      group.runs.push_back(make_run_report(std::move(run.plan), run.result, against));
    }
    std::stable_sort(group.runs.begin(), group.runs.end(), runs_before);
    if (!group.runs.empty() && group.runs.front().summary.timed()) group.best = group.runs.front().summary.strategy;
    comparison.groups.push_back(std::move(group));
  }
  return comparison;
}

}  // namespace splitscope
