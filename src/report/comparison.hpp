#pragma once
/// \file
/// A Comparison: the runs of one `run` or `compare` invocation, grouped by
/// what they ran on (backend and machine), each group judged against its own
/// `single` run and ordered best first. It is what every Reporter receives.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "report/report_context.hpp"
#include "report/run_report.hpp"
#include "timeline/run_result.hpp"

namespace splitscope {

/// The runs on one backend and machine.
struct RunGroup {
  std::string backend;   ///< RunInfo::backend
  std::string machine;   ///< RunInfo::machine_name
  bool measured = true;  ///< false for the simulator's predictions
  std::vector<RunReport> runs;        ///< best first: fastest median, runs that do not fit last
  std::optional<RunSummary> baseline; ///< the group's `single` run, shown or not
  std::optional<std::string> best;    ///< the fastest strategy that fits
};

struct Comparison {
  ReportContext context;
  /// In the order their first run was added: the asked-for backend first,
  /// then predictions (the simulator on a named machine) beside it.
  std::vector<RunGroup> groups;

  /// The first group (the asked-for backend). Needs at least one group.
  const RunGroup& primary() const;
  /// Every shown run of every group.
  std::vector<const RunReport*> all_runs() const;
};

/// Collects runs as they finish, then judges and orders them.
class ComparisonBuilder {
 public:
  explicit ComparisonBuilder(ReportContext context);

  /// Adds a finished run of `plan`. `shown = false` keeps a run only as its
  /// group's baseline (`run --strategy pipeline` still needs `single` timed).
  /// Runs are grouped by (RunInfo::backend, RunInfo::machine_name).
  void add(std::shared_ptr<const Plan> plan, const RunResult& result, bool shown = true);

  /// Judges each run against its group's `single` run (no verdict where the
  /// group has none) and orders each group best first.
  Comparison build() &&;

 private:
  struct Pending {
    std::shared_ptr<const Plan> plan;
    RunResult result;
    bool shown = true;
  };
  ReportContext context_;
  std::vector<std::vector<Pending>> groups_;
};

}  // namespace splitscope
