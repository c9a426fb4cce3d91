#pragma once
/// \file
/// The dependency-counter runtime. Every task carries a counter of unfinished
/// predecessors; a task whose counter reaches zero is pushed onto the queue of
/// the worker serving its (device, lane); a worker runs its queue in order and,
/// after each task, decrements the counters of the task's successors.
///
/// Workers, made once and reused for every run:
/// - compute lanes: `compute_workers` threads; device d's compute tasks go to
///   worker d mod compute_workers (the inter-op parallelism: how many ops run at
///   the same time). Each owns an intra-op pool of `intra_op_threads` threads
///   (itself included) that its tasks spread their kernels over.
/// - every other lane: one thread per (device, lane) used, running tasks one at
///   a time (a copy engine), so that transfers overlap compute.
///
/// A run's clock starts once every worker and intra-op helper is awake
/// (wake_workers), and the run ends when every task has finished, when a task throws, or at the
/// deadline. On failure, workers finish the task they are running, take no new
/// one, and run() throws RunError naming the tasks that were running.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/task_graph.hpp"

namespace splitscope {

/// How long an idle worker looks for new work before it sleeps on its
/// condition variable; waking it after that costs a wake-up from sleep.
inline constexpr std::chrono::microseconds kWorkerSpinBeforeSleeping{50};

struct SchedulerConfig {
  int devices = 1;
  int compute_workers = 1;   ///< threads running compute tasks; at most `devices` are useful
  int intra_op_threads = 1;  ///< threads per compute task's kernel, the worker included
  std::vector<Lane> copy_lanes{Lane::kCopyIn};  ///< the non-compute lanes tasks may use
  /// Pins every compute thread to a CPU of its own (compute_thread_cpus()),
  /// where they fit in the CPUs this process may use. Off for schedulers
  /// that share a process with others of their kind (parameter-server
  /// workers), which would all take the first CPUs.
  bool pin_compute_threads = false;
};

/// The CPUs `config`'s compute threads go to when pinned: worker by worker,
/// and within a worker its intra-op threads (itself first), consecutive CPUs
/// of the affinity mask `cpus`. Empty where it does not pin: pinning off, or
/// more compute threads than `cpus` (they would share CPUs anyway, and the
/// kernel balances a shared CPU better than a fixed placement).
std::vector<int> compute_thread_cpus(const SchedulerConfig& config, const std::vector<int>& cpus);

/// When a task ran, in microseconds since the start of the run (steady clock).
struct TaskTiming {
  double start_us = 0;
  double end_us = 0;
};

class Scheduler {
 public:
  explicit Scheduler(const SchedulerConfig& config);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Runs every task of `graph` once; returns when each task ran, by task id.
  /// Throws RunError if a task throws (naming it), if the run lasts longer than
  /// `deadline` (naming the tasks running then), or if tasks can never become
  /// ready (a cycle). Not reentrant: one run at a time.
  std::vector<TaskTiming> run(const TaskGraph& graph,
                              std::optional<std::chrono::microseconds> deadline = std::nullopt);

  const SchedulerConfig& config() const { return config_; }
  /// The CPUs its compute threads are pinned to (compute_thread_cpus()); empty
  /// where they are not, or where the system refused a pin.
  const std::vector<int>& pinned_cpus() const { return pinned_cpus_; }
  /// When the last run's clock started (its TaskTimings count from here):
  /// a multi-process run puts its ranks' timings on one clock with it.
  std::chrono::steady_clock::time_point last_run_start() const { return run_start_; }

 private:
  struct Worker;
  using Clock = std::chrono::steady_clock;

  int worker_of(const Task& task) const;
  void worker_loop(Worker& worker);
  /// Under mutex_: pushes a ready task onto its worker's queue; returns that
  /// worker if it must be woken (it is not `self`), for the caller to notify
  /// once it has released the lock (a thread woken under the lock would only
  /// block again on it).
  Worker* enqueue(int task, const Worker* self);
  /// Under mutex_: wakes every worker and its intra-op helpers and returns
  /// once all are awake, so that a run's clock starts with its threads
  /// looking for work. A parked thread takes tens of microseconds to wake,
  /// and whether a run's first ops paid that would otherwise depend on how
  /// long ago the last run ended (runs of a small network measured twice
  /// as long one time as the next).
  void wake_workers(std::unique_lock<std::mutex>& lock);
  /// Under mutex_, once every task has finished: "running " and the tasks
  /// whose timings span `deadline`, or empty if none did. The waiting thread
  /// may itself wake only after the run has ended (its CPU busy with a pinned
  /// worker and another process), and a run past its deadline must fail all
  /// the same.
  std::string describe_spanning(std::chrono::microseconds deadline) const;
  /// Under mutex_: what is running now, for the failure message.
  std::string describe_running() const;
  /// Under mutex_: stops handing out work and waits for running tasks to end.
  void abort_run(std::unique_lock<std::mutex>& lock, std::string reason);

  /// Pins the compute workers' threads (pin_compute_threads); sets pinned_cpus_.
  void pin_compute_threads();

  SchedulerConfig config_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<int> pinned_cpus_;

  // Everything below is under mutex_ (one lock for all queues: a handful of
  // workers, and a few hundred nanoseconds held per task).
  mutable std::mutex mutex_;
  std::condition_variable run_done_;
  bool stopping_ = false;
  const TaskGraph* graph_ = nullptr;  ///< the graph being run; null between runs
  Clock::time_point run_start_;
  std::vector<int> unfinished_inputs_;  ///< per task: predecessors not yet finished
  std::vector<TaskTiming> timings_;
  int finished_ = 0;
  int in_flight_ = 0;  ///< tasks popped from a queue and not yet finished
  int queued_ = 0;     ///< tasks in some queue
  int awake_workers_ = 0;  ///< workers that answered wake_workers()
  /// Runs whose clock has started, readable without the lock by workers
  /// spinning after wake_workers() until it starts.
  std::atomic<uint64_t> runs_started_{0};
  bool aborted_ = false;
  std::string failure_;  ///< why the run failed; empty while it has not
};

}  // namespace splitscope
