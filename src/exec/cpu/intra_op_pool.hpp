#pragma once
/// \file
/// The intra-op pool: threads that one running op spreads its kernel over
/// (the "intra-op parallelism" of TensorFlow and PyTorch). Each compute worker
/// owns one; the worker itself runs chunks too, so a pool of T threads starts
/// T - 1 helpers.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "exec/cpu/kernels/parallel_for.hpp"

namespace splitscope {

class IntraOpPool final : public ParallelFor {
 public:
  /// `threads` >= 1, including the thread that calls run().
  explicit IntraOpPool(int threads);
  ~IntraOpPool() override;
  IntraOpPool(const IntraOpPool&) = delete;
  IntraOpPool& operator=(const IntraOpPool&) = delete;

  int threads() const override { return static_cast<int>(helpers_.size()) + 1; }
  /// Splits [0, count) into at most threads() chunks of at least `grain`;
  /// the caller runs chunks alongside the helpers. Not reentrant: one run()
  /// at a time (one op per worker).
  void run(int64_t count, int64_t grain, const ChunkFunction& chunk) override;
  /// Wakes every helper and returns once each is spinning for the next job.
  void wake() override;
  /// Pins helper i to cpus[i] (threads() - 1 of them); false if any refused.
  bool pin_helpers(const std::vector<int>& cpus);

 private:
  /// One parallel loop: a chunk function over [0, count) cut into `chunks`.
  struct Job {
    const ChunkFunction* chunk = nullptr;
    int64_t count = 0;
    int64_t chunks = 0;
  };

  void helper_loop();
  /// Runs chunks of `job` until none is left.
  void drain(const Job& job);

  std::vector<std::thread> helpers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  bool stopping_ = false;
  uint64_t generation_ = 0;  ///< bumped for every job, so helpers see each one once
  /// generation_, readable without the lock by helpers spinning for the next job.
  std::atomic<uint64_t> published_generation_{0};

  // Under mutex_: the current job and its progress. run() returns only when
  // every chunk is done and no helper is still inside drain(), so a helper
  // never sees a job's fields change under it.
  Job job_;
  int64_t unfinished_ = 0;    ///< chunks of job_ not yet finished
  int busy_helpers_ = 0;      ///< helpers inside drain()
  uint64_t wake_generation_ = 0;  ///< bumped by wake()
  std::atomic<uint64_t> published_wake_{0};  ///< wake_generation_, for spinning helpers
  int awake_helpers_ = 0;     ///< helpers that saw the latest wake()
  std::exception_ptr error_;  ///< the first chunk failure
  std::atomic<int64_t> next_chunk_{0};  ///< the next chunk of job_ to hand out
};

}  // namespace splitscope
