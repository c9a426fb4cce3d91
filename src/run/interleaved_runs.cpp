#include "run/interleaved_runs.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/judgement.hpp"
#include "report/speedup_interval.hpp"

namespace splitscope {
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

/// Makespans (ms) of timelines [first, end) of `result`.
std::vector<double> makespans_ms(const RunResult& result, size_t first) {
  std::vector<double> ms;
  for (size_t i = first; i < result.timelines.size(); ++i) ms.push_back(result.timelines[i].makespan_us() / 1000.0);
  return ms;
}

}  // namespace

void check_interleaved_fit(const Executor& executor, const std::vector<std::shared_ptr<const Plan>>& plans) {
  if (plans.empty()) return;
  if (plans.size() == 1) {
    const Plan* const alone[] = {plans.front().get()};
    executor.check_fit_together(alone);
    return;
  }
  for (size_t i = 1; i < plans.size(); ++i) {
    const Plan* const pair[] = {plans.front().get(), plans[i].get()};
    executor.check_fit_together(pair);
  }
}

std::vector<RunResult> run_interleaved(Executor& executor, const std::vector<std::shared_ptr<const Plan>>& plans,
                                       const RunOptions& options, Progress& progress, RepeatPolicy policy) {
  check_interleaved_fit(executor, plans);
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
    const size_t baseline_first = results.front().timelines.size();
    const auto started = std::chrono::steady_clock::now();
    for (int pairs = 1;; ++pairs) {
      // The pair's number, of at least --repeat (an uncertain verdict asks for more).
      progress.on_repeat(pairs - 1, std::max(pairs, options.repeats));
      baseline->run(0, 1, results.front());
      split->run(0, 1, results[i]);
      if (pairs < options.repeats) continue;
      if (!policy.adaptive || pairs >= policy.most || std::chrono::steady_clock::now() - started >= policy.budget) {
        break;
      }
      const auto interval = speedup_interval(makespans_ms(results.front(), baseline_first), makespans_ms(results[i], 0));
      if (!interval || !straddles_a_threshold(*interval)) break;
    }
    if (options.want_output) results[i].output = split->output();
    progress.end_run();
  }
  if (options.want_output) results.front().output = baseline->output();
  return results;
}

}  // namespace splitscope
