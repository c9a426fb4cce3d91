#include "exec/cpu/intra_op_pool.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "exec/cpu/spin_wait.hpp"
#include "util/check.hpp"
#include "util/thread_affinity.hpp"

namespace splitscope {
namespace {

/// How long an idle helper looks for the next job before it sleeps.
constexpr std::chrono::microseconds kSpinBeforeSleeping{50};

}  // namespace

IntraOpPool::IntraOpPool(int threads) {
  SPLITSCOPE_CHECK(threads >= 1, "an intra-op pool needs at least one thread");
  helpers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) helpers_.emplace_back([this] { helper_loop(); });
}

bool IntraOpPool::pin_helpers(const std::vector<int>& cpus) {
  SPLITSCOPE_CHECK(cpus.size() == helpers_.size(), "one cpu per helper");
  bool pinned = true;
  for (size_t i = 0; i < helpers_.size(); ++i) pinned = pin_thread(helpers_[i], cpus[i]) && pinned;
  return pinned;
}

IntraOpPool::~IntraOpPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& helper : helpers_) helper.join();
}

void IntraOpPool::run(int64_t count, int64_t grain, const ChunkFunction& chunk) {
  if (count <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks = std::min<int64_t>(threads(), (count + grain - 1) / grain);
  if (chunks <= 1) {
    chunk(0, count);
    return;
  }
  Job job{&chunk, count, chunks};
  {
    std::lock_guard lock(mutex_);
    job_ = job;
    unfinished_ = chunks;
    error_ = nullptr;
    next_chunk_.store(0, std::memory_order_relaxed);
    ++generation_;
    published_generation_.store(generation_, std::memory_order_release);
  }
  work_ready_.notify_all();
  drain(job);
  std::unique_lock lock(mutex_);
  // A helper still inside a chunk ends within a chunk's time: wait for it
  // awake, or the op's end would pay a wake-up from sleep.
  wait_spinning_first(lock, work_done_, kSpinBeforeSleeping,
                      [this] { return unfinished_ == 0 && busy_helpers_ == 0; });
  job_ = Job{};
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void IntraOpPool::wake() {
  if (helpers_.empty()) return;
  std::unique_lock lock(mutex_);
  ++wake_generation_;
  published_wake_.store(wake_generation_, std::memory_order_release);
  awake_helpers_ = 0;
  lock.unlock();
  work_ready_.notify_all();
  lock.lock();
  // Asleep here, this thread would itself take a wake-up to see the helpers
  // awake, and they might spin out their window meanwhile.
  wait_spinning_first(lock, work_done_, kWakeAnswerSpin,
                      [this] { return awake_helpers_ == static_cast<int>(helpers_.size()); });
}

void IntraOpPool::drain(const Job& job) {
  for (;;) {
    const int64_t index = next_chunk_.fetch_add(1, std::memory_order_relaxed);
    if (index >= job.chunks) return;
    // Chunk sizes differ by at most one element.
    const int64_t begin = job.count * index / job.chunks;
    const int64_t end = job.count * (index + 1) / job.chunks;
    std::exception_ptr failure;
    try {
      (*job.chunk)(begin, end);
    } catch (...) {
      failure = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    if (failure && !error_) error_ = failure;
    if (--unfinished_ == 0) work_done_.notify_one();
  }
}

void IntraOpPool::helper_loop() {
  uint64_t seen = 0;
  uint64_t seen_wake = 0;
  for (;;) {
    // Spin briefly for the next job before sleeping: an op's kernels come
    // back to back, and waking a parked thread costs more than most chunks.
    spin_until(kSpinBeforeSleeping, [&] {
      return published_generation_.load(std::memory_order_acquire) != seen ||
             published_wake_.load(std::memory_order_acquire) != seen_wake;
    });
    Job job;
    {
      std::unique_lock lock(mutex_);
      // A job that finished while this helper slept is skipped, not joined.
      work_ready_.wait(lock, [&] {
        return stopping_ || (generation_ != seen && unfinished_ > 0) || wake_generation_ != seen_wake;
      });
      if (stopping_) return;
      if (wake_generation_ != seen_wake) {
        // Awake now: say so, and spin for the job that follows.
        seen_wake = wake_generation_;
        if (++awake_helpers_ == static_cast<int>(helpers_.size())) work_done_.notify_all();
        continue;
      }
      seen = generation_;
      job = job_;
      ++busy_helpers_;
    }
    drain(job);
    std::lock_guard lock(mutex_);
    if (--busy_helpers_ == 0 && unfinished_ == 0) work_done_.notify_one();
  }
}

}  // namespace splitscope
