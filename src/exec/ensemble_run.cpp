#include "exec/ensemble_run.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <fmt/format.h>
#include <thread>

#include "util/errors.hpp"
#include "util/median.hpp"

namespace splitscope {
namespace {

double median_makespan_ms(const RunResult& result) {
  std::vector<double> spans;
  for (const Timeline& timeline : result.timelines) spans.push_back(timeline.makespan_us() / 1e3);
  return spans.empty() ? 0.0 : median(spans);
}

/// What one member did in the request.
struct MemberRun {
  double end_ms = 0;
  bool failed = false;
  std::string error;
  HostTensor output;
};

/// A member's one run in the request: on its prepared run where the backend
/// keeps one, else a fresh run.
RunResult run_once(Executor& executor, const EnsembleMember& member, PreparedRun* prepared,
                   const RunOptions& options) {
  RunOptions once = options;
  once.warmup = 0;
  once.repeats = 1;
  once.on_repeat = nullptr;
  return prepared != nullptr ? run_prepared(*prepared, once) : executor.run(member.plan, once);
}

/// Runs `device`'s members in turn on one executor, each after its delay.
void run_device(const std::vector<EnsembleMember>& members, int device, Executor& executor,
                const std::vector<std::unique_ptr<PreparedRun>>& prepared, const RunOptions& options, bool measured,
                std::vector<MemberRun>& runs) {
  double clock_ms = 0;
  for (size_t m = 0; m < members.size(); ++m) {
    const EnsembleMember& member = members[m];
    if (member.device != device || runs[m].failed) continue;  // one that failed alone is not asked again
    if (member.delay_ms > 0 && measured) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(member.delay_ms));
    }
    clock_ms += member.delay_ms;
    try {
      const RunResult result = run_once(executor, member, prepared[m].get(), options);
      clock_ms += median_makespan_ms(result);
      runs[m].output = result.output;
    } catch (const std::exception& error) {
      runs[m].failed = true;
      runs[m].error = error.what();
    }
    runs[m].end_ms = clock_ms;
  }
}

}  // namespace

EnsembleResult run_ensemble(const std::vector<EnsembleMember>& members, int devices,
                            const ExecutorFactory& make_executor, const RunOptions& options,
                            std::optional<double> deadline_ms) {
  EnsembleResult result;
  std::vector<std::unique_ptr<Executor>> executors;
  for (int d = 0; d < devices; ++d) executors.push_back(make_executor(d));

  // Alone, one after another: each member's time and the sequential baseline.
  // Each member is set up here, once (buffers, weights, library handles, the
  // convolution algorithm search), so that the request below runs only the
  // members: a server holds its models loaded, and on one carved GPU a
  // member's set-up (device-wide synchronisations) would collide with the
  // others' runs.
  std::vector<MemberRun> runs(members.size());
  std::vector<std::unique_ptr<PreparedRun>> prepared(members.size());
  for (size_t m = 0; m < members.size(); ++m) {
    MemberOutcome outcome;
    outcome.network = members[m].network;
    outcome.device = members[m].device;
    Executor& executor = *executors[static_cast<size_t>(members[m].device)];
    try {
      prepared[m] = executor.prepare(members[m].plan, options);
      const RunResult run =
          prepared[m] != nullptr ? run_prepared(*prepared[m], options) : executor.run(members[m].plan, options);
      result.measured = run.info.measured;
      outcome.alone_ms = median_makespan_ms(run);
      result.sequential_ms += outcome.alone_ms;
    } catch (const InputError&) {
      // A member that cannot run at all (it does not fit, say) is bad input,
      // as it is for `run`; only a failure of a run that could go is dropped.
      throw;
    } catch (const std::exception& error) {
      runs[m].failed = true;
      runs[m].error = error.what();
    }
    result.members.push_back(outcome);
  }

  // The request: every device at once.
  std::vector<std::thread> threads;
  for (int d = 0; d < devices; ++d) {
    threads.emplace_back(run_device, std::cref(members), d, std::ref(*executors[static_cast<size_t>(d)]),
                         std::cref(prepared), std::cref(options), result.measured, std::ref(runs));
  }
  for (std::thread& thread : threads) thread.join();

  // The aggregator: members in time are used; it answers when the last of
  // them is in, or at the deadline if one is missing.
  double last_used_ms = 0, last_finished_ms = 0;
  bool all_used = true;
  std::vector<const HostTensor*> answers;
  for (size_t m = 0; m < members.size(); ++m) {
    MemberOutcome& outcome = result.members[m];
    outcome.latency_ms = runs[m].end_ms;
    last_finished_ms = std::max(last_finished_ms, outcome.latency_ms);
    if (runs[m].failed) {
      outcome.dropped = "failed: " + runs[m].error;
    } else if (deadline_ms && outcome.latency_ms > *deadline_ms) {
      outcome.dropped = fmt::format("missed the {:.4g} ms deadline by {:.4g} ms", *deadline_ms,
                                    outcome.latency_ms - *deadline_ms);
    } else {
      outcome.used = true;
      last_used_ms = std::max(last_used_ms, outcome.latency_ms);
      answers.push_back(&runs[m].output);
    }
    all_used = all_used && outcome.used;
  }
  if (all_used) {
    result.ensemble_latency_ms = last_used_ms;
  } else {
    result.ensemble_latency_ms = deadline_ms ? std::min(*deadline_ms, last_finished_ms) : last_finished_ms;
  }
  if (!answers.empty()) {
    result.output.shape = answers.front()->shape;
    result.output.data.assign(answers.front()->data.size(), 0.0f);
    for (const HostTensor* answer : answers) {
      for (size_t i = 0; i < answer->data.size(); ++i) result.output.data[i] += answer->data[i];
    }
    const float share = 1.0f / static_cast<float>(answers.size());
    for (float& value : result.output.data) value *= share;
  }
  return result;
}

}  // namespace splitscope
