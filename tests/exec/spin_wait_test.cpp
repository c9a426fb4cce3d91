// wait_spinning_first: it sees a condition made true without a notify while
// it spins, and falls back to the condition variable after its window.
// spin_until: it sees an atomic flag set by another thread, and gives up
// after its window.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "exec/cpu/spin_wait.hpp"

namespace splitscope {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(SpinWait, ReturnsAtOnceWhenAlreadyReady) {
  std::mutex mutex;
  std::condition_variable cv;
  std::unique_lock lock(mutex);
  wait_spinning_first(lock, cv, microseconds(0), [] { return true; });
  EXPECT_TRUE(lock.owns_lock());
}

TEST(SpinWait, SeesReadinessWithoutANotifyWhileSpinning) {
  std::mutex mutex;
  std::condition_variable cv;
  bool ready = false;
  bool notified = false;  // set only by the late notify below
  bool returned_before_notify = false;
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(1));
    {
      std::lock_guard guard(mutex);
      ready = true;  // no notify: only a spinning waiter sees it
    }
    std::this_thread::sleep_for(milliseconds(500));
    {
      std::lock_guard guard(mutex);
      notified = true;
    }
    cv.notify_all();
  });
  {
    std::unique_lock lock(mutex);
    wait_spinning_first(lock, cv, std::chrono::duration_cast<microseconds>(std::chrono::seconds(5)),
                        [&] { return ready; });
    returned_before_notify = !notified;
  }
  setter.join();
  EXPECT_TRUE(returned_before_notify);
}

TEST(SpinWait, SleepsOnTheConditionVariableAfterItsWindow) {
  std::mutex mutex;
  std::condition_variable cv;
  bool ready = false;
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(20));
    {
      std::lock_guard guard(mutex);
      ready = true;
    }
    cv.notify_all();
  });
  const auto start = std::chrono::steady_clock::now();
  {
    std::unique_lock lock(mutex);
    wait_spinning_first(lock, cv, microseconds(100), [&] { return ready; });
    EXPECT_TRUE(ready);
  }
  setter.join();
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(20));
}

TEST(SpinUntil, SeesAFlagSetByAnotherThread) {
  std::atomic<bool> flag{false};
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(1));
    flag.store(true, std::memory_order_release);
  });
  const bool held = spin_until(std::chrono::duration_cast<microseconds>(std::chrono::seconds(5)),
                               [&] { return flag.load(std::memory_order_acquire); });
  setter.join();
  EXPECT_TRUE(held);
}

TEST(SpinUntil, GivesUpAfterItsWindow) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(spin_until(microseconds(2000), [] { return false; }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, microseconds(2000));
}

}  // namespace
}  // namespace splitscope
