#include "exec/cpu/ps_training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/host_info.hpp"
#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/parameter_shard.hpp"
#include "exec/cpu/ps_worker.hpp"
#include "exec/cpu/thread_config.hpp"
#include "exec/run_limits.hpp"
#include "exec/ps/run_record.hpp"
#include "exec/training_divergence.hpp"
#include "ir/training.hpp"
#include "plan/parameter_shards.hpp"
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
  std::vector<float> gradient;  ///< the shard's weight sets' gradients end to end
};

/// A shard and what its thread shares with the workers, under its lock.
struct ShardThread {
  std::mutex mutex;
  std::condition_variable version_changed;  ///< workers waiting to pull
  std::condition_variable arrived;          ///< the shard thread waiting for gradients
  ParameterShard shard;
  std::deque<GradientMessage> inbox;
  std::vector<int64_t> processed;  ///< per worker: its gradients taken in or dropped

  ShardThread(const ParameterServerOptions& options, int workers, int index, int device, const Optimizer& optimizer,
              int64_t batch)
      : shard(options, workers, index, device, optimizer, batch), processed(static_cast<size_t>(workers), 0) {}
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
    for (int k = 0; k < plan.parameter_servers; ++k) {
      shards_.push_back(
          std::make_unique<ShardThread>(ps, workers_count_, k, workers_count_ + k, optimizer, plan.graph->batch()));
    }
    for (size_t set = 0; set < shard_of.size(); ++set) {
      // Every replica starts from the seed's weights: the shard's master copy is one of them.
      shards_.at(static_cast<size_t>(shard_of[set]))
          ->shard.hold(static_cast<int>(set), workers_.front()->weights(static_cast<int>(set)));
    }
  }

  RunResult run() {
    start_ = Clock::now();
    std::vector<std::thread> threads;
    for (auto& shard : shards_) {
      threads.emplace_back([this, s = shard.get()] { guarded([&] { serve(*s); }); });
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
        ShardThread& thread = *shards_[k];
        std::unique_lock lock(thread.mutex);
        const ShardLedger& ledger = thread.shard.ledger();
        thread.version_changed.wait(lock, [&] { return stop_ || !ledger.worker_waits(pulled[k]); });
        over = over || ledger.finished();
      }
      if (over || stop_) break;
      // Pull.
      const double pull_start = now_us();
      int64_t pulled_bytes = 0;
      for (size_t k = 0; k < shards_.size(); ++k) {
        ShardThread& thread = *shards_[k];
        const std::lock_guard lock(thread.mutex);
        for (size_t i = 0; i < thread.shard.weight_sets().size(); ++i) {
          // Copied into place: the worker's tasks hold pointers to its tensors.
          WeightSlice& mine = worker.weights(thread.shard.weight_sets()[i]);
          const WeightSlice& master = thread.shard.master(i);
          for (size_t t = 0; t < mine.tensors.size(); ++t) {
            std::copy(master.tensors[t].begin(), master.tensors[t].end(), mine.tensors[t].begin());
          }
          pulled_bytes += mine.bytes();
        }
        pulled[k] = thread.shard.ledger().version();
      }
      record(pull_span(worker.index(), pull_start, now_us(), pulled_bytes));
      // Compute.
      std::vector<Span> spans = worker.step(start_, deadline_);
      const double loss = worker.loss(*plan_.graph, options_.seed);
      double step_end = 0;
      for (const Span& span : spans) step_end = std::max(step_end, span.end_us);
      {
        const std::lock_guard lock(results_mutex_);
        record_.spans.insert(record_.spans.end(), spans.begin(), spans.end());
        record_.step_losses.push_back({step_end, loss, worker.rows().size()});
      }
      // Push.
      const double push_start = now_us();
      int64_t pushed_bytes = 0;
      for (size_t k = 0; k < shards_.size(); ++k) {
        ShardThread& thread = *shards_[k];
        GradientMessage message{worker.index(), pulled[k], worker.rows().size(), {}};
        message.gradient.reserve(static_cast<size_t>(thread.shard.gradient_floats()));
        for (int set : thread.shard.weight_sets()) {
          const ConstChannelBlock gradient = worker.gradient(set);
          message.gradient.insert(message.gradient.end(), gradient.data, gradient.data + gradient.floats());
        }
        pushed_bytes += static_cast<int64_t>(message.gradient.size()) * 4;
        const std::lock_guard lock(thread.mutex);
        thread.inbox.push_back(std::move(message));
        thread.arrived.notify_one();
      }
      // A push returns once each shard has dealt with it (as a parameter
      // server's apply-gradients call does), so that the next pull sees this
      // worker's own update: one async worker is sync.
      for (auto& thread : shards_) {
        std::unique_lock lock(thread->mutex);
        thread->version_changed.wait(lock, [&] {
          return stop_ || thread->processed[static_cast<size_t>(worker.index())] == step + 1;
        });
      }
      record(push_span(worker.index(), push_start, now_us(), pushed_bytes));
    }
  }

  void record(Span span) {
    const std::lock_guard lock(results_mutex_);
    record_.spans.push_back(std::move(span));
  }

  /// Shard thread: takes the gradients in arrival order, each under the
  /// shard's lock (an update is applied in place; pulls wait for it, as on a
  /// real server).
  void serve(ShardThread& thread) {
    const std::function<double()> clock = [this] { return now_us(); };
    std::unique_lock lock(thread.mutex);
    for (;;) {
      thread.arrived.wait(lock, [&] { return stop_ || workers_done_ || !thread.inbox.empty(); });
      if (stop_) return;
      if (thread.inbox.empty()) return;  // the workers are done and every gradient dealt with
      GradientMessage message = std::move(thread.inbox.front());
      thread.inbox.pop_front();
      thread.shard.offer(message.pulled, message.rows, message.gradient, clock);
      ++thread.processed[static_cast<size_t>(message.worker)];
      thread.version_changed.notify_all();
    }
  }

  RunResult result() {
    for (const auto& thread : shards_) {
      record_.tallies.push_back(thread->shard.tally());
      record_.spans.insert(record_.spans.end(), thread->shard.spans().begin(), thread->shard.spans().end());
    }
    RunInfo info = cpu_run_info(plan_, options_, threads_, {});
    info.facts.emplace_back("parameter servers",
                            fmt::format("{} shard thread(s), {} worker thread(s)", shards_.size(), workers_count_));
    RunResult result = parameter_server_result(ps_, workers_count_, std::move(record_), std::move(info));
    check_losses_finite(result.losses, plan_.graph->training()->optimizer, ps_.mode == PsMode::kAsync);
    result.output = output();
    return result;
  }

  /// Each worker's rows of its last step's output, as the network output [batch, ...].
  HostTensor output() const {
    HostTensor output = empty_network_output(*plan_.graph);
    const int64_t width = output.data.empty() ? 0 : static_cast<int64_t>(output.data.size()) / plan_.graph->batch();
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
  std::vector<std::unique_ptr<ShardThread>> shards_;
  Clock::time_point start_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> workers_done_{false};
  std::mutex failure_mutex_;
  std::exception_ptr failure_;
  std::mutex results_mutex_;
  PsRunRecord record_;
};

}  // namespace

RunResult run_cpu_parameter_server(const Plan& plan, const RunOptions& options, const ParameterServerOptions& ps) {
  SPLITSCOPE_CHECK(plan.traits.parameter_server && plan.parameter_servers > 0 && plan.graph->is_training(),
                   "run_cpu_parameter_server() of a plan that is not ps training");
  const int workers = ps_workers(plan);
  check_parameter_server_options(ps, workers);
  check_ps_straggler(options, workers);
  check_recorded_runs(plan, ps.steps, "--steps", workers);
  PsRun run(plan, options, ps);
  return run.run();
}

}  // namespace splitscope
