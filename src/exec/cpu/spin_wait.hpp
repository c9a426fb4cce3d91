#pragma once
/// \file
/// Waiting for another thread of the cpu runtime without going to sleep
/// first. A thread asleep on a condition variable takes tens of microseconds
/// to wake on a virtual machine whose vCPU has halted (77-85 us on the build
/// VM: `calibrate --backend cpu`'s parked hand-off), longer than most of what
/// the runtime waits for: a helper's last chunk, or the workers answering a
/// wake-up before a run's clock starts.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace splitscope {

/// How long a thread that woke others spins for their answer before it
/// sleeps: a few wake-ups' worth.
inline constexpr std::chrono::microseconds kWakeAnswerSpin{1000};

/// Looks at `ready()` every yield until it holds or `spin` has passed,
/// without a lock: for flags kept in atomics. Yielding keeps the spin from
/// starving the threads that are doing the work. Returns whether it held.
template <class Ready>
bool spin_until(std::chrono::microseconds spin, Ready ready) {
  const auto give_up = std::chrono::steady_clock::now() + spin;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= give_up) return false;
    std::this_thread::yield();
  }
  return true;
}

/// Returns once `ready()` holds, checked under `lock`: looking again every
/// yield for up to `spin` (the lock released between looks), then asleep on
/// `cv`, which whoever makes `ready()` true must notify.
template <class Ready>
void wait_spinning_first(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                         std::chrono::microseconds spin, Ready ready) {
  const auto give_up = std::chrono::steady_clock::now() + spin;
  while (!ready() && std::chrono::steady_clock::now() < give_up) {
    lock.unlock();
    std::this_thread::yield();
    lock.lock();
  }
  cv.wait(lock, ready);
}

}  // namespace splitscope
