#include "exec/input_stream.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "exec/run_limits.hpp"
#include "ir/graph.hpp"
#include "ir/model.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

using Clock = std::chrono::steady_clock;

/// How far the three threads have got, and the times they recorded.
class StreamState {
 public:
  explicit StreamState(int steps) : times(static_cast<size_t>(steps)), copies(static_cast<size_t>(steps)) {}

  double now_us() const { return std::chrono::duration<double, std::micro>(Clock::now() - start_).count(); }

  /// Waits until `ready` holds (under the lock) or the stream is aborted;
  /// false when aborted.
  template <typename Ready>
  bool wait(Ready ready) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return aborted_ || ready(); });
    return !aborted_;
  }
  /// Sets a counter (under the lock) and wakes every waiter.
  void advance(int& counter, int value) {
    {
      std::lock_guard lock(mutex_);
      counter = value;
    }
    changed_.notify_all();
  }
  void abort() {
    {
      std::lock_guard lock(mutex_);
      aborted_ = true;
    }
    changed_.notify_all();
  }

  int prepared = 0, copied = 0, started = 0, ended = 0;  ///< steps past each stage
  std::vector<InputStepTimes> times;
  std::vector<std::vector<InputCopy>> copies;

 private:
  const Clock::time_point start_ = Clock::now();
  std::mutex mutex_;
  std::condition_variable changed_;
  bool aborted_ = false;
};

/// The host's preparation of one batch: it writes every float of the batch
/// (what a decoder does), then stays busy on the host for whatever is left of
/// `cost_us` (the preparation cost the user gave is host time, not sleep).
void prepare_batch(float* batch, size_t floats, int step, double cost_us) {
  const Clock::time_point start = Clock::now();
  const float base = static_cast<float>(step % 7) * 0.125f;
  for (size_t i = 0; i < floats; ++i) batch[i] = base + static_cast<float>(i % 251) * (1.0f / 251.0f);
  const auto until = start + std::chrono::duration<double, std::micro>(cost_us);
  while (Clock::now() < until) {
  }
}

class HostInputStaging final : public InputStaging {
 public:
  HostInputStaging(const std::vector<InputCopy>& targets, size_t slots, int64_t batch_bytes)
      : host_(slots, std::vector<float>(static_cast<size_t>(batch_bytes) / sizeof(float))) {
    for (const InputCopy& target : targets) devices_.emplace_back(static_cast<size_t>(target.bytes) / sizeof(float));
  }
  float* host_batch(size_t slot) override { return host_.at(slot).data(); }
  void copy(size_t slot, size_t target, int64_t bytes) override {
    std::memcpy(devices_.at(target).data(), host_.at(slot).data(), static_cast<size_t>(bytes));
  }

 private:
  std::vector<std::vector<float>> host_;     ///< a buffer per batch in flight
  std::vector<std::vector<float>> devices_;  ///< the input buffer of each target
};

}  // namespace

std::unique_ptr<InputStaging> host_input_staging(const std::vector<InputCopy>& targets, size_t slots,
                                                 int64_t batch_bytes) {
  return std::make_unique<HostInputStaging>(targets, slots, batch_bytes);
}

RunResult run_measured_input_stream(Executor& executor, const Plan& plan, const RunOptions& options,
                                    const InputPipelineOptions& input, const InputStagingFactory& make_staging) {
  check_input_pipeline_options(input);
  if (options.repeats < 1) throw InputError("--repeat", "", "must be at least 1");
  check_recorded_runs(plan, options.repeats, "--repeat", 1, input_stream_spans_per_step(plan, input));
  const int fill = std::max(options.warmup, 1);
  const int steps = fill + options.repeats;
  const double cost_us = input.cost_us_per_sample * static_cast<double>(plan.graph->batch());

  const std::vector<InputCopy> targets = network_input_copies(plan);
  // The host prepares the whole batch: every network input (two-tower's two
  // images), whatever share of it each device then reads.
  int64_t batch_bytes = 0;
  for (const NetworkInput& network_input : plan.graph->model().inputs) {
    batch_bytes += plan.graph->batch() * element_count(network_input.shape) * static_cast<int64_t>(sizeof(float));
  }
  for (const InputCopy& target : targets) batch_bytes = std::max(batch_bytes, target.bytes);
  // A host buffer per batch in flight, and the devices' input buffers.
  const size_t slots = static_cast<size_t>(input.prefetch) + 1;
  const std::unique_ptr<InputStaging> staging = make_staging(targets, slots, batch_bytes);

  RunOptions once = options;
  once.warmup = 0;
  once.repeats = 1;
  once.on_repeat = nullptr;
  const std::unique_ptr<PreparedRun> prepared = executor.prepare(plan, once);
  RunResult result;
  std::vector<Timeline> computed(static_cast<size_t>(steps));
  StreamState state(steps);

  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto fail = [&](std::exception_ptr error) {
    {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = error;
    }
    state.abort();
  };

  std::thread preparer([&] {
    try {
      for (int s = 0; s < steps; ++s) {
        // The place batch s waits in frees when step s - K takes its batch
        // (or, without prefetch, when step s - 1 has ended).
        const bool go = state.wait([&] {
          if (input.prefetch == 0) return state.ended >= s;
          return state.started >= s - input.prefetch + 1;
        });
        if (!go) return;
        InputStepTimes& at = state.times[static_cast<size_t>(s)];
        at.prepare_start = state.now_us();
        prepare_batch(staging->host_batch(static_cast<size_t>(s) % slots),
                      static_cast<size_t>(batch_bytes) / sizeof(float), s, cost_us);
        at.prepare_end = state.now_us();
        state.advance(state.prepared, s + 1);
      }
    } catch (...) {
      fail(std::current_exception());
    }
  });
  std::thread copier([&] {
    try {
      for (int s = 0; s < steps; ++s) {
        if (!state.wait([&] { return state.prepared > s; })) return;
        InputStepTimes& at = state.times[static_cast<size_t>(s)];
        at.copy_start = state.now_us();
        for (size_t d = 0; d < targets.size(); ++d) {
          staging->copy(static_cast<size_t>(s) % slots, d, targets[d].bytes);
          state.copies[static_cast<size_t>(s)].push_back(
              InputCopy{targets[d].device, targets[d].bytes, state.now_us() - at.copy_start});
        }
        at.copy_end = state.now_us();
        state.advance(state.copied, s + 1);
      }
    } catch (...) {
      fail(std::current_exception());
    }
  });

  try {
    for (int s = 0; s < steps; ++s) {
      if (!state.wait([&] { return state.copied > s; })) break;
      InputStepTimes& at = state.times[static_cast<size_t>(s)];
      at.compute_start = state.now_us();
      state.advance(state.started, s + 1);
      RunResult step;
      if (prepared != nullptr) {
        prepared->run(0, 1, step);
      } else {
        step = executor.run(plan, once);
      }
      at.compute_end = state.now_us();
      computed[static_cast<size_t>(s)] = std::move(step.timelines.at(0));
      if (s == 0) result.info = step.info;
      if (s + 1 == steps && options.want_output) {
        result.output = prepared != nullptr ? prepared->output() : std::move(step.output);
      }
      state.advance(state.ended, s + 1);
    }
  } catch (...) {
    fail(std::current_exception());
  }
  preparer.join();
  copier.join();
  if (failure) std::rethrow_exception(failure);

  for (int s = fill; s < steps; ++s) {
    result.timelines.push_back(input_step_window(state.times, s, computed[static_cast<size_t>(s)], state.copies));
  }
  result.info.input_pipeline = summarize_input_pipeline(state.times, fill, input);
  result.info.facts.emplace_back("input pipeline",
                                 fmt::format("{} us a sample prepared on a host thread, prefetch {}",
                                             input.cost_us_per_sample, input.prefetch));
  return result;
}

}  // namespace splitscope
