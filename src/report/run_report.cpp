#include "report/run_report.hpp"

#include "util/check.hpp"

namespace splitscope {

RunReport make_run_report(std::shared_ptr<const Plan> plan, const RunResult& result,
                          const RunSummary* baseline) {
  SPLITSCOPE_CHECK(plan != nullptr, "a run report needs its plan");
  RunReport report;
  report.summary = summarize(*plan, result);
  if (report.summary.timed()) {
    report.timeline = result.timelines[static_cast<size_t>(report.summary.makespan->representative)];
  }
  const bool is_baseline = baseline == nullptr && plan->traits.baseline;
  report.judgement = judge(report.summary, is_baseline ? &report.summary : baseline);
  report.plan = std::move(plan);
  return report;
}

}  // namespace splitscope
