#include "exec/cpu/ps_training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <span>
#include <thread>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/host_info.hpp"
#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/kernels/optimizer_step.hpp"
#include "exec/cpu/plan_tasks.hpp"
#include "exec/cpu/scheduler.hpp"
#include "exec/cpu/thread_config.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "exec/ps/shard_ledger.hpp"
#include "exec/ps/shard_tally.hpp"
#include "exec/ps/step_windows.hpp"
#include "ir/training.hpp"
#include "partitioners/parameter_shards.hpp"
#include "partitioners/plan_part.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

using Clock = std::chrono::steady_clock;

double microseconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

/// One worker's gradient of one shard's weight sets, and what it was computed on.
struct GradientMessage {
  int worker = 0;
  int pulled = 0;    ///< the shard's version the worker pulled
  int64_t rows = 0;  ///< rows of the batch it is summed over
  std::vector<std::vector<float>> gradients;  ///< one per weight set of the shard, flat
};

/// A worker step's loss, for the loss curve.
struct StepLoss {
  double end_us = 0;
  double loss = 0;
  int64_t rows = 0;
};

/// Everything the threads share, each shard under its own lock.
struct Shard {
  std::mutex mutex;
  std::condition_variable version_changed;  ///< workers waiting to pull
  std::condition_variable arrived;          ///< the shard thread waiting for gradients
  ShardLedger ledger;
  std::vector<int> weight_sets;  ///< indices into a worker part's Plan::parameters
  std::vector<WeightSlice> master;
  std::vector<std::vector<float>> state;  ///< optimizer state, per weight set
  std::vector<std::vector<float>> sum;    ///< the update being aggregated
  int64_t sum_rows = 0;
  double lr_scale = 1.0;
  std::deque<GradientMessage> inbox;
  std::vector<int64_t> processed;  ///< per worker: its gradients taken in or dropped
  // Results.
  std::vector<Span> spans;
  ShardTally tally;

  Shard(const ParameterServerOptions& options, int workers)
      : ledger(options, workers), processed(static_cast<size_t>(workers), 0) {}
};

/// A worker: its part of the plan on a scheduler of its own.
class PsWorker {
 public:
  PsWorker(const Plan& plan, int index, const RunOptions& options, const ThreadConfig& threads, ParallelFor& setup)
      : index_(index),
        part_(device_part(plan, index)),
        buffers_(part_.plan),
        weights_(*plan.graph, options.seed, setup),
        tasks_(build_plan_tasks(part_.plan, buffers_, weights_, straggler_of(options, index))),
        scheduler_(scheduler_config(threads)) {
    fill_network_inputs(part_.plan, options.seed, buffers_);
    SPLITSCOPE_CHECK(part_.plan.outputs.size() == 1, "a ps worker's output in several values");
    rows_ = part_.plan.value(part_.plan.outputs[0]).batch;
    for (int id : part_.plan.parameters) {
      const Value& params = part_.plan.value(id);
      int gradient = -1;
      for (const Value& value : part_.plan.values) {
        if (value.role == ValueRole::kGradient && value.node == params.node && value.channels == params.channels &&
            value.reduce == params.reduce) {
          gradient = value.id;
        }
      }
      SPLITSCOPE_CHECK(gradient >= 0, "a ps worker's weights without a gradient");
      gradients_.push_back(gradient);
    }
  }

  int index() const { return index_; }
  Range rows() const { return rows_; }
  const Plan& part() const { return part_.plan; }
  /// The weights of weight set `set` (an index into the part's parameters), to pull into.
  WeightSlice& weights(int set) { return *weights_.get_mutable(part_.plan.value(part_.plan.parameters.at(set))); }
  /// Its gradient, flat.
  ConstChannelBlock gradient(int set) const { return buffers_.block(gradients_.at(static_cast<size_t>(set))); }
  /// Runs the forward and backward pass; returns its op spans (the whole
  /// plan's op ids, its own device), on the clock of `start`.
  std::vector<Span> step(Clock::time_point start, const std::optional<std::chrono::microseconds>& deadline) {
    const std::vector<TaskTiming> timings = scheduler_.run(tasks_.graph, deadline);
    const double offset = microseconds_between(start, scheduler_.last_run_start());
    Timeline timeline = tasks_timeline(tasks_, timings);
    for (Span& span : timeline.spans) {
      span.device = index_;
      span.op = part_.plan_op.at(static_cast<size_t>(span.op));
      span.start_us += offset;
      span.end_us += offset;
    }
    return std::move(timeline.spans);
  }
  /// Its rows of the network output, [rows][output].
  ConstChannelBlock output() const { return buffers_.block(part_.plan.outputs[0]); }

 private:
  static std::optional<StragglerDelay> straggler_of(const RunOptions& options, int index) {
    if (!options.straggler || !options.straggler->holds_back(index)) return std::nullopt;
    return StragglerDelay{0, options.straggler->ms};
  }
  static SchedulerConfig scheduler_config(const ThreadConfig& threads) {
    SchedulerConfig config;
    config.devices = 1;
    config.compute_workers = 1;
    config.intra_op_threads = threads.intra_op;
    return config;
  }

  int index_;
  DevicePart part_;
  ValueBuffers buffers_;
  WeightStore weights_;
  PlanTasks tasks_;
  Scheduler scheduler_;
  Range rows_;
  std::vector<int> gradients_;  ///< the gradient value of each weight set
};

class PsRun {
 public:
  PsRun(const Plan& plan, const RunOptions& options, const ParameterServerOptions& ps)
      : plan_(plan),
        options_(options),
        ps_(ps),
        workers_count_(ps_workers(plan)),
        threads_(resolve_threads(options, workers_count_, read_host_info().hardware_threads)),
        setup_threads_(threads_.hardware_threads),
        deadline_(run_deadline(options)) {
    for (int w = 0; w < workers_count_; ++w) {
      workers_.push_back(std::make_unique<PsWorker>(plan, w, options, threads_, setup_threads_));
    }
    const std::vector<int> shard_of = parameter_shards(plan, 0);
    const Optimizer& optimizer = plan.graph->training()->optimizer;
    for (int k = 0; k < plan.parameter_servers; ++k) shards_.push_back(std::make_unique<Shard>(ps, workers_count_));
    for (size_t set = 0; set < shard_of.size(); ++set) {
      Shard& shard = *shards_.at(static_cast<size_t>(shard_of[set]));
      shard.weight_sets.push_back(static_cast<int>(set));
      // Every replica starts from the seed's weights: the shard's master copy is one of them.
      const WeightSlice& first = workers_.front()->weights(static_cast<int>(set));
      shard.master.push_back(first);
      const auto floats = static_cast<size_t>(first.bytes() / 4);
      shard.state.emplace_back(floats * static_cast<size_t>(optimizer.state_per_param()), 0.0f);
      shard.sum.emplace_back(floats, 0.0f);
    }
  }

  RunResult run() {
    start_ = Clock::now();
    std::vector<std::thread> threads;
    for (size_t k = 0; k < shards_.size(); ++k) {
      threads.emplace_back([this, k] { guarded([&] { serve(*shards_[k], workers_count_ + static_cast<int>(k)); }); });
    }
    std::vector<std::thread> worker_threads;
    for (auto& worker : workers_) {
      worker_threads.emplace_back([this, w = worker.get()] { guarded([&] { work(*w); }); });
    }
    for (std::thread& thread : worker_threads) thread.join();
    {
      // The shards drain their inboxes, then stop.
      workers_done_ = true;
      for (auto& shard : shards_) {
        const std::lock_guard lock(shard->mutex);
        shard->arrived.notify_all();
      }
    }
    for (std::thread& thread : threads) thread.join();
    if (failure_) std::rethrow_exception(failure_);
    return result();
  }

 private:
  /// Runs `body`; the first failure stops every thread and is rethrown by run().
  template <typename Body>
  void guarded(Body body) {
    try {
      body();
    } catch (...) {
      {
        const std::lock_guard lock(failure_mutex_);
        if (!failure_) failure_ = std::current_exception();
      }
      stop_ = true;
      for (auto& shard : shards_) {
        const std::lock_guard lock(shard->mutex);
        shard->version_changed.notify_all();
        shard->arrived.notify_all();
      }
    }
  }

  double now_us() const { return microseconds_between(start_, Clock::now()); }

  void work(PsWorker& worker) {
    std::vector<int> pulled(shards_.size(), -1);
    for (int step = 0; !stop_; ++step) {
      if (ps_.mode == PsMode::kAsync && step == ps_.steps) break;
      // Wait until every shard has a version this worker may pull.
      bool over = false;
      for (size_t k = 0; k < shards_.size(); ++k) {
        Shard& shard = *shards_[k];
        std::unique_lock lock(shard.mutex);
        shard.version_changed.wait(lock, [&] { return stop_ || !shard.ledger.worker_waits(pulled[k]); });
        over = over || shard.ledger.finished();
      }
      if (over || stop_) break;
      // Pull.
      const double pull_start = now_us();
      int64_t pulled_bytes = 0;
      for (size_t k = 0; k < shards_.size(); ++k) {
        Shard& shard = *shards_[k];
        const std::lock_guard lock(shard.mutex);
        for (size_t i = 0; i < shard.weight_sets.size(); ++i) {
          WeightSlice& mine = worker.weights(shard.weight_sets[i]);
          for (size_t t = 0; t < mine.tensors.size(); ++t) {
            std::copy(shard.master[i].tensors[t].begin(), shard.master[i].tensors[t].end(), mine.tensors[t].begin());
          }
          pulled_bytes += mine.bytes();
        }
        pulled[k] = shard.ledger.version();
      }
      record_worker_span(worker.index(), Lane::kCopyIn, "pull weights", pull_start, now_us(), pulled_bytes);
      // Compute.
      std::vector<Span> spans = worker.step(start_, deadline_);
      const ConstChannelBlock out = worker.output();
      const double loss = rows_loss(*plan_.graph, std::span<const float>(out.data, static_cast<size_t>(out.floats())),
                                    options_.seed, worker.rows());
      double step_end = 0;
      for (const Span& span : spans) step_end = std::max(step_end, span.end_us);
      {
        const std::lock_guard lock(results_mutex_);
        worker_spans_.insert(worker_spans_.end(), spans.begin(), spans.end());
        step_losses_.push_back({step_end, loss, worker.rows().size()});
        ++pushed_;
      }
      // Push.
      const double push_start = now_us();
      int64_t pushed_bytes = 0;
      for (size_t k = 0; k < shards_.size(); ++k) {
        Shard& shard = *shards_[k];
        GradientMessage message{worker.index(), pulled[k], worker.rows().size(), {}};
        for (int set : shard.weight_sets) {
          const ConstChannelBlock gradient = worker.gradient(set);
          message.gradients.emplace_back(gradient.data, gradient.data + gradient.floats());
          pushed_bytes += gradient.floats() * 4;
        }
        const std::lock_guard lock(shard.mutex);
        shard.inbox.push_back(std::move(message));
        shard.arrived.notify_one();
      }
      // A push returns once each shard has dealt with it (as a parameter
      // server's apply-gradients call does), so that the next pull sees this
      // worker's own update: one async worker is sync.
      for (auto& shard : shards_) {
        std::unique_lock lock(shard->mutex);
        shard->version_changed.wait(lock, [&] {
          return stop_ || shard->processed[static_cast<size_t>(worker.index())] == step + 1;
        });
      }
      record_worker_span(worker.index(), Lane::kCopyOut, "push gradients", push_start, now_us(), pushed_bytes);
    }
  }

  void record_worker_span(int device, Lane lane, const std::string& label, double start, double end, int64_t bytes) {
    Span span;
    span.device = device;
    span.lane = lane;
    span.kind = SpanKind::kTransfer;
    span.label = label;
    span.start_us = start;
    span.end_us = end;
    span.bytes = bytes;
    const std::lock_guard lock(results_mutex_);
    worker_spans_.push_back(std::move(span));
  }

  /// Shard thread: takes the gradients in arrival order; `device` is the shard's in the plan.
  void serve(Shard& shard, int device) {
    std::unique_lock lock(shard.mutex);
    for (;;) {
      shard.arrived.wait(lock, [&] { return stop_ || workers_done_ || !shard.inbox.empty(); });
      if (stop_) return;
      if (shard.inbox.empty()) return;  // the workers are done and every gradient dealt with
      GradientMessage message = std::move(shard.inbox.front());
      shard.inbox.pop_front();
      const GradientVerdict verdict = shard.ledger.offer(message.pulled);
      ++shard.processed[static_cast<size_t>(message.worker)];
      if (!verdict.accepted) {
        ++shard.tally.dropped;
        shard.version_changed.notify_all();
        continue;
      }
      shard.tally.taken(verdict.staleness, message.rows);
      for (size_t i = 0; i < shard.sum.size(); ++i) {
        std::vector<float>& sum = shard.sum[i];
        const std::vector<float>& gradient = message.gradients[i];
        for (size_t e = 0; e < sum.size(); ++e) sum[e] += gradient[e];
      }
      shard.sum_rows += message.rows;
      shard.lr_scale = verdict.lr_scale;
      if (verdict.completes) apply(shard, device);
      shard.version_changed.notify_all();
    }
  }

  /// Applies the aggregated update, under the shard's lock: the rows-weighted
  /// mean of the gradients taken (each worker's is a sum over its rows / B).
  void apply(Shard& shard, int device) {
    const double start = now_us();
    const Optimizer& optimizer = plan_.graph->training()->optimizer;
    const auto mean = static_cast<float>(static_cast<double>(plan_.graph->batch()) / static_cast<double>(shard.sum_rows));
    const OptimizerStep step =
        optimizer_step(optimizer, optimizer.learning_rate * shard.lr_scale, shard.ledger.version() + 1);
    int64_t weights = 0;
    SerialFor serial;
    for (size_t i = 0; i < shard.master.size(); ++i) {
      std::vector<float>& sum = shard.sum[i];
      for (float& g : sum) g *= mean;
      float* state = shard.state[i].empty() ? nullptr : shard.state[i].data();
      apply_optimizer_step(serial, step, shard.master[i].tensors, sum.data(), state);
      std::fill(sum.begin(), sum.end(), 0.0f);
      weights += static_cast<int64_t>(sum.size());
    }
    shard.sum_rows = 0;
    shard.lr_scale = 1.0;
    shard.ledger.applied();
    Span span;
    span.device = device;
    span.lane = Lane::kCompute;
    span.kind = SpanKind::kCompute;
    span.label = fmt::format("shard {} update {}", device - workers_count_, shard.ledger.version());
    span.start_us = start;
    span.end_us = now_us();
    span.flops = optimizer.update_flops(weights);
    shard.spans.push_back(span);
    shard.tally.update_ends_us.push_back(span.end_us);
  }

  RunResult result() {
    std::vector<ShardTally> tallies;
    for (const auto& shard : shards_) {
      tallies.push_back(shard->tally);
      for (const WeightSlice& slice : shard->master) tallies.back().bytes += slice.bytes();
    }
    ParameterServerSummary summary = summarize_shards(ps_, workers_count_, tallies, pushed_);
    const std::vector<double>& ends = summary.window_ends;
    if (ends.empty()) throw RunError("--strategy ps: no update was applied; every gradient was dropped");
    std::vector<Span> spans = worker_spans_;
    for (const auto& shard : shards_) spans.insert(spans.end(), shard->spans.begin(), shard->spans.end());
    RunResult result;
    result.timelines = cut_into_windows(spans, ends);
    ParameterServerInfo& info = summary.info;

    // One loss per window: the rows-weighted mean of the worker steps that ended in it.
    std::sort(step_losses_.begin(), step_losses_.end(),
              [](const StepLoss& a, const StepLoss& b) { return a.end_us < b.end_us; });
    size_t next = 0;
    double previous = step_losses_.empty() ? 0.0 : step_losses_.front().loss;
    for (double end : ends) {
      double weighted = 0;
      int64_t rows = 0;
      for (; next < step_losses_.size() && step_losses_[next].end_us <= end; ++next) {
        weighted += step_losses_[next].loss * static_cast<double>(step_losses_[next].rows);
        rows += step_losses_[next].rows;
      }
      const double loss = rows > 0 ? weighted / static_cast<double>(rows) : previous;
      result.losses.push_back(loss);
      info.loss_curve.emplace_back(end, loss);
      previous = loss;
    }
    result.output = output();
    result.info = cpu_run_info(plan_, options_, threads_);
    result.info.facts.emplace_back("parameter servers", fmt::format("{} shard thread(s), {} worker thread(s)",
                                                                    shards_.size(), workers_count_));
    result.info.parameter_server = std::move(info);
    return result;
  }

  /// Each worker's rows of its last step's output, as the network output [batch, ...].
  HostTensor output() const {
    const TensorRef tensor = plan_.graph->output();
    const Shape& sample = plan_.graph->node(tensor.node).output_shapes.at(static_cast<size_t>(tensor.output));
    HostTensor output;
    output.shape.push_back(plan_.graph->batch());
    output.shape.insert(output.shape.end(), sample.begin(), sample.end());
    const int64_t width = element_count(sample);
    output.data.assign(static_cast<size_t>(plan_.graph->batch() * width), 0.0f);
    for (const auto& worker : workers_) {
      const ConstChannelBlock block = worker->output();
      SPLITSCOPE_CHECK(block.row_floats() == width, "a ps worker's output is not whole rows");
      std::copy(block.data, block.data + block.floats(), output.data.begin() + worker->rows().begin * width);
    }
    return output;
  }

  const Plan& plan_;
  RunOptions options_;
  ParameterServerOptions ps_;
  int workers_count_;
  ThreadConfig threads_;
  IntraOpPool setup_threads_;
  std::optional<std::chrono::microseconds> deadline_;
  std::vector<std::unique_ptr<PsWorker>> workers_;
  std::vector<std::unique_ptr<Shard>> shards_;
  Clock::time_point start_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> workers_done_{false};
  std::mutex failure_mutex_;
  std::exception_ptr failure_;
  std::mutex results_mutex_;
  std::vector<Span> worker_spans_;
  std::vector<StepLoss> step_losses_;
  int64_t pushed_ = 0;
};

}  // namespace

RunResult run_cpu_parameter_server(const Plan& plan, const RunOptions& options, const ParameterServerOptions& ps) {
  SPLITSCOPE_CHECK(plan.traits.parameter_server && plan.parameter_servers > 0 && plan.graph->is_training(),
                   "run_cpu_parameter_server() of a plan that is not ps training");
  const int workers = ps_workers(plan);
  check_parameter_server_options(ps, workers);
  if (options.straggler && options.straggler->device != StragglerDelay::kEveryDevice &&
      (options.straggler->device < 0 || options.straggler->device >= workers)) {
    throw InputError("--straggler", "",
                     fmt::format("names device {}; the workers are devices 0-{} (the shards after them)",
                                 options.straggler->device, workers - 1));
  }
  PsRun run(plan, options, ps);
  return run.run();
}

}  // namespace splitscope
