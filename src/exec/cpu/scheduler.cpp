#include "exec/cpu/scheduler.hpp"

#include <atomic>

#include <algorithm>
#include <deque>
#include <fmt/format.h>

#include "exec/cpu/spin_wait.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"
#include "util/thread_affinity.hpp"

namespace splitscope {

struct Scheduler::Worker {
  std::deque<int> queue;  ///< ready task ids, run in the order they became ready
  std::atomic<int> queued{0};  ///< queue.size(), readable without the lock while spinning
  std::vector<Worker*> to_wake;  ///< workers given tasks by the last one this worker ran
  std::condition_variable ready;
  std::unique_ptr<ParallelFor> parallel;
  std::string name;  ///< "compute worker 0", "device 1 copy-in"
  int current = -1;  ///< the task running now, or -1
  bool wake_requested = false;  ///< run() asks it to wake (and its intra-op helpers) before the clock starts
  Clock::time_point current_start;
  std::thread thread;
};

Scheduler::Scheduler(const SchedulerConfig& config) : config_(config) {
  SPLITSCOPE_CHECK(config_.devices >= 1, "a scheduler needs a device");
  SPLITSCOPE_CHECK(config_.compute_workers >= 1, "a scheduler needs a compute worker");
  SPLITSCOPE_CHECK(config_.intra_op_threads >= 1, "an op needs at least one thread");
  for (int i = 0; i < config_.compute_workers; ++i) {
    auto worker = std::make_unique<Worker>();
    worker->parallel = std::make_unique<IntraOpPool>(config_.intra_op_threads);
    worker->name = fmt::format("compute worker {}", i);
    workers_.push_back(std::move(worker));
  }
  for (int device = 0; device < config_.devices; ++device) {
    for (Lane lane : config_.copy_lanes) {
      SPLITSCOPE_CHECK(lane != Lane::kCompute, "the compute lane has its own workers");
      auto worker = std::make_unique<Worker>();
      worker->parallel = std::make_unique<SerialFor>();
      worker->name = fmt::format("device {} {}", device, to_string(lane));
      workers_.push_back(std::move(worker));
    }
  }
  for (auto& worker : workers_) {
    Worker* raw = worker.get();
    raw->thread = std::thread([this, raw] { worker_loop(*raw); });
  }
  if (config_.pin_compute_threads) pin_compute_threads();
}

std::vector<int> compute_thread_cpus(const SchedulerConfig& config, const std::vector<int>& cpus) {
  const size_t threads = static_cast<size_t>(config.compute_workers) * static_cast<size_t>(config.intra_op_threads);
  if (!config.pin_compute_threads || threads > cpus.size()) return {};
  return {cpus.begin(), cpus.begin() + static_cast<ptrdiff_t>(threads)};
}

void Scheduler::pin_compute_threads() {
  const std::vector<int> cpus = compute_thread_cpus(config_, allowed_cpus());
  if (cpus.empty()) return;
  const auto per_worker = static_cast<size_t>(config_.intra_op_threads);
  bool pinned = true;
  for (size_t w = 0; w < static_cast<size_t>(config_.compute_workers); ++w) {
    Worker& worker = *workers_[w];
    const auto first = cpus.begin() + static_cast<ptrdiff_t>(w * per_worker);
    pinned = pin_thread(worker.thread, *first) && pinned;
    // Compute workers' pools are IntraOpPools (the constructor above).
    auto& pool = static_cast<IntraOpPool&>(*worker.parallel);
    pinned = pool.pin_helpers({first + 1, first + static_cast<ptrdiff_t>(per_worker)}) && pinned;
  }
  if (pinned) pinned_cpus_ = cpus;
}

Scheduler::~Scheduler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  for (auto& worker : workers_) worker->ready.notify_all();
  for (auto& worker : workers_) worker->thread.join();
}

int Scheduler::worker_of(const Task& task) const {
  if (task.lane == Lane::kCompute) return task.device % config_.compute_workers;
  const auto lane = std::find(config_.copy_lanes.begin(), config_.copy_lanes.end(), task.lane);
  const int lanes = static_cast<int>(config_.copy_lanes.size());
  return config_.compute_workers + task.device * lanes +
         static_cast<int>(lane - config_.copy_lanes.begin());
}

Scheduler::Worker* Scheduler::enqueue(int task, const Worker* self) {
  Worker* worker = workers_[static_cast<size_t>(worker_of(graph_->task(task)))].get();
  worker->queue.push_back(task);
  worker->queued.fetch_add(1, std::memory_order_release);
  ++queued_;
  return worker == self ? nullptr : worker;
}

std::vector<TaskTiming> Scheduler::run(const TaskGraph& graph,
                                       std::optional<std::chrono::microseconds> deadline) {
  for (int id = 0; id < graph.size(); ++id) {
    const Task& task = graph.task(id);
    SPLITSCOPE_CHECK(task.device < config_.devices,
                     fmt::format("task {} is on device {} of {}", task.label, task.device, config_.devices));
    SPLITSCOPE_CHECK(task.lane == Lane::kCompute ||
                         std::find(config_.copy_lanes.begin(), config_.copy_lanes.end(), task.lane) !=
                             config_.copy_lanes.end(),
                     fmt::format("task {} is on the {} lane, which has no worker", task.label,
                                 to_string(task.lane)));
  }
  std::unique_lock lock(mutex_);
  SPLITSCOPE_CHECK(graph_ == nullptr, "Scheduler::run is not reentrant");
  graph_ = &graph;
  unfinished_inputs_.resize(static_cast<size_t>(graph.size()));
  for (int id = 0; id < graph.size(); ++id) unfinished_inputs_[static_cast<size_t>(id)] = graph.dependency_count(id);
  timings_.assign(static_cast<size_t>(graph.size()), TaskTiming{});
  finished_ = 0;
  in_flight_ = 0;
  queued_ = 0;
  aborted_ = false;
  failure_.clear();
  wake_workers(lock);
  run_start_ = Clock::now();
  runs_started_.fetch_add(1, std::memory_order_release);
  for (int id = 0; id < graph.size(); ++id) {
    if (graph.dependency_count(id) == 0) {
      if (Worker* worker = enqueue(id, nullptr)) worker->ready.notify_one();
    }
  }
  if (graph.size() > 0 && queued_ == 0) {
    aborted_ = true;
    failure_ = "no task can start: every task waits on another (a dependency cycle)";
  }
  const auto done = [&] { return finished_ == graph.size() || aborted_; };
  if (deadline) {
    const bool ended = run_done_.wait_until(lock, run_start_ + *deadline, done);
    if (!aborted_) {
      const std::string overran = ended ? describe_spanning(*deadline) : describe_running();
      if (!overran.empty()) {
        aborted_ = true;
        failure_ = fmt::format("the run exceeded its deadline of {:g} ms (--timeout-ms) while {}",
                               static_cast<double>(deadline->count()) / 1000.0, overran);
      }
    }
  } else {
    run_done_.wait(lock, done);
  }
  if (aborted_) {
    abort_run(lock, failure_);
  }
  graph_ = nullptr;
  return std::move(timings_);
}

std::string Scheduler::describe_spanning(std::chrono::microseconds deadline) const {
  const double deadline_us = static_cast<double>(deadline.count());
  std::vector<std::string> running;
  for (int id = 0; id < graph_->size(); ++id) {
    const TaskTiming& timing = timings_[static_cast<size_t>(id)];
    if (timing.start_us > deadline_us || timing.end_us <= deadline_us) continue;
    const Task& task = graph_->task(id);
    running.push_back(fmt::format("{} (device {}, {} lane, from {:.1f} to {:.1f} ms)", task.label, task.device,
                                  to_string(task.lane), timing.start_us / 1000, timing.end_us / 1000));
  }
  return running.empty() ? std::string() : "running " + join(running, "; ");
}

void Scheduler::wake_workers(std::unique_lock<std::mutex>& lock) {
  awake_workers_ = 0;
  for (auto& worker : workers_) worker->wake_requested = true;
  lock.unlock();
  for (auto& worker : workers_) worker->ready.notify_one();
  lock.lock();
  // Spinning, not asleep: a sleeping caller would take a wake-up of its own
  // to learn that the workers are awake, long enough for them to spin out
  // their window and sleep again before the run's first task reaches them
  // (a run's first transfer waited 50 us for its copy worker).
  wait_spinning_first(lock, run_done_, kWakeAnswerSpin,
                      [this] { return awake_workers_ == static_cast<int>(workers_.size()); });
}

void Scheduler::abort_run(std::unique_lock<std::mutex>& lock, std::string reason) {
  aborted_ = true;
  for (auto& worker : workers_) {
    worker->queue.clear();
    worker->queued.store(0, std::memory_order_relaxed);
  }
  queued_ = 0;
  run_done_.wait(lock, [this] { return in_flight_ == 0; });
  graph_ = nullptr;
  throw RunError(std::move(reason));
}

std::string Scheduler::describe_running() const {
  const auto now = Clock::now();
  std::vector<std::string> running;
  for (const auto& worker : workers_) {
    if (worker->current < 0) continue;
    const Task& task = graph_->task(worker->current);
    const double ms = std::chrono::duration<double, std::milli>(now - worker->current_start).count();
    running.push_back(fmt::format("{} (device {}, {} lane, for {:.1f} ms)", task.label, task.device,
                                  to_string(task.lane), ms));
  }
  if (!running.empty()) return "running " + join(running, "; ");
  std::vector<std::string> waiting;
  for (const auto& worker : workers_) {
    for (int id : worker->queue) waiting.push_back(graph_->task(id).label);
  }
  return "no task was running; ready to start: " +
         (waiting.empty() ? std::string("none") : join(waiting, "; "));
}

void Scheduler::worker_loop(Worker& worker) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (worker.queue.empty() && !stopping_) {
      // Spin briefly before sleeping: waking a thread parked on a condition
      // variable costs tens of microseconds on an idle machine, far more than
      // the next task of a chain usually takes to arrive.
      lock.unlock();
      spin_until(kWorkerSpinBeforeSleeping,
                 [&] { return worker.queued.load(std::memory_order_acquire) != 0; });
      lock.lock();
    }
    worker.ready.wait(lock, [&] { return stopping_ || !worker.queue.empty() || worker.wake_requested; });
    if (stopping_) return;
    if (worker.wake_requested) {
      worker.wake_requested = false;
      lock.unlock();
      worker.parallel->wake();
      lock.lock();
      if (++awake_workers_ == static_cast<int>(workers_.size())) run_done_.notify_all();
      // Awake until the run's clock starts, however long the other workers
      // take to wake, and then for the usual window (the loop's top).
      const uint64_t started = runs_started_.load(std::memory_order_relaxed);
      lock.unlock();
      spin_until(kWakeAnswerSpin, [&] { return runs_started_.load(std::memory_order_acquire) != started; });
      lock.lock();
      continue;
    }
    const int id = worker.queue.front();
    worker.queue.pop_front();
    worker.queued.fetch_sub(1, std::memory_order_relaxed);
    --queued_;
    ++in_flight_;
    const Task& task = graph_->task(id);
    const Clock::time_point run_start = run_start_;
    worker.current = id;
    worker.current_start = Clock::now();
    const Clock::time_point start = worker.current_start;
    lock.unlock();

    std::string error;
    try {
      TaskContext context{*worker.parallel};
      task.work(context);
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "an unknown exception";
    }
    const Clock::time_point end = Clock::now();

    lock.lock();
    worker.current = -1;
    --in_flight_;
    using Micros = std::chrono::duration<double, std::micro>;
    timings_[static_cast<size_t>(id)] = {Micros(start - run_start).count(), Micros(end - run_start).count()};
    if (!error.empty() && !aborted_) {
      aborted_ = true;
      failure_ = fmt::format("{} (device {}, {} lane) failed: {}", task.label, task.device,
                             to_string(task.lane), error);
    }
    if (aborted_) {
      if (in_flight_ == 0) run_done_.notify_all();
      continue;
    }
    worker.to_wake.clear();
    for (int successor : graph_->successors(id)) {
      if (--unfinished_inputs_[static_cast<size_t>(successor)] == 0) {
        if (Worker* other = enqueue(successor, &worker)) worker.to_wake.push_back(other);
      }
    }
    ++finished_;
    if (finished_ == graph_->size()) {
      run_done_.notify_all();
    } else if (in_flight_ == 0 && queued_ == 0) {
      aborted_ = true;
      failure_ = fmt::format("{} of {} tasks can never start: they wait on each other (a dependency cycle)",
                             graph_->size() - finished_, graph_->size());
      run_done_.notify_all();
    }
    if (!worker.to_wake.empty()) {
      lock.unlock();
      for (Worker* other : worker.to_wake) other->ready.notify_one();
      lock.lock();
    }
  }
}

}  // namespace splitscope
