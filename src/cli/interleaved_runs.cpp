#include "cli/interleaved_runs.hpp"

#include <fmt/format.h>

namespace splitscope::cli {
namespace {

std::vector<RunResult> run_one_after_another(Executor& executor,
                                             const std::vector<std::shared_ptr<const Plan>>& plans,
                                             const RunOptions& options, Progress& progress) {
  std::vector<RunResult> results;
  for (const auto& plan : plans) {
    progress.begin_run(fmt::format("{} on {}", plan->strategy, executor.name()));
    results.push_back(executor.run(*plan, options));
    progress.end_run();
  }
  return results;
}

}  // namespace

std::vector<RunResult> run_interleaved(Executor& executor, const std::vector<std::shared_ptr<const Plan>>& plans,
                                       const RunOptions& options, Progress& progress) {
  if (plans.size() < 2) return run_one_after_another(executor, plans, options, progress);
  RunOptions quiet = options;
  quiet.on_repeat = nullptr;  // one repeat at a time: the progress line names the pair instead
  const std::unique_ptr<PreparedRun> baseline = executor.prepare(*plans.front(), quiet);
  if (baseline == nullptr) return run_one_after_another(executor, plans, options, progress);

  std::vector<RunResult> results(plans.size());
  baseline->run(options.warmup, 0, results.front());
  for (size_t i = 1; i < plans.size(); ++i) {
    progress.begin_run(fmt::format("{} on {}, interleaved with {}", plans[i]->strategy, executor.name(),
                                   plans.front()->strategy));
    const std::unique_ptr<PreparedRun> split = executor.prepare(*plans[i], quiet);
    split->run(options.warmup, 0, results[i]);
    for (int repeat = 0; repeat < options.repeats; ++repeat) {
      baseline->run(0, 1, results.front());
      split->run(0, 1, results[i]);
    }
    if (options.want_output) results[i].output = split->output();
    progress.end_run();
  }
  if (options.want_output) results.front().output = baseline->output();
  return results;
}

}  // namespace splitscope::cli
