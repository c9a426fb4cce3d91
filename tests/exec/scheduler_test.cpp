// The dependency-counter scheduler, on synthetic task graphs: order, overlap,
// deadline, failures, reuse.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include <sched.h>

#include "exec/cpu/scheduler.hpp"
#include "util/errors.hpp"
#include "util/thread_affinity.hpp"

namespace splitscope {
namespace scheduler_test {
namespace {

using std::chrono::milliseconds;

Task sleeping_task(int device, Lane lane, std::string label, milliseconds duration, std::atomic<int>* runs = nullptr) {
  return {device, lane, std::move(label), [duration, runs](TaskContext&) {
            std::this_thread::sleep_for(duration);
            if (runs != nullptr) runs->fetch_add(1);
          }};
}

bool overlap(const TaskTiming& a, const TaskTiming& b) {
  return std::max(a.start_us, b.start_us) < std::min(a.end_us, b.end_us);
}

TEST(Scheduler, RandomDagNeverStartsATaskBeforeItsInputsFinish) {
  // 300 tasks over 3 devices and both lanes; each depends on up to 3 earlier ones.
  std::mt19937 random(7);
  TaskGraph graph;
  std::vector<std::atomic<int>> runs(300);
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < 300; ++i) {
    const int device = static_cast<int>(random() % 3);
    const Lane lane = random() % 2 == 0 ? Lane::kCompute : Lane::kCopyIn;
    graph.add({device, lane, "t" + std::to_string(i), [&runs, i](TaskContext&) {
                 // A little real work, so that spans have length and races have room.
                 volatile double x = 0;
                 for (int k = 0; k < 2000; ++k) x = x + k;
                 runs[static_cast<size_t>(i)].fetch_add(1);
               }});
    for (int d = 0; d < 3 && i > 0; ++d) {
      const int before = static_cast<int>(random() % static_cast<unsigned>(i));
      graph.add_dependency(before, i);
      edges.emplace_back(before, i);
    }
  }
  Scheduler scheduler({3, 3, 1, {Lane::kCopyIn}});
  for (int round = 1; round <= 2; ++round) {  // the same scheduler and graph, run twice
    const std::vector<TaskTiming> timings = scheduler.run(graph);
    ASSERT_EQ(timings.size(), 300u);
    for (const auto& [before, after] : edges) {
      EXPECT_GE(timings[static_cast<size_t>(after)].start_us, timings[static_cast<size_t>(before)].end_us)
          << before << " -> " << after;
    }
    for (const auto& count : runs) EXPECT_EQ(count.load(), round);
  }
}

TEST(Scheduler, DiamondBranchesRunConcurrentlyOnTwoDevices) {
  // a (device 0) -> b (device 0), c (device 1) -> d (device 0); b and c take 40 ms each.
  TaskGraph graph;
  const int a = graph.add(sleeping_task(0, Lane::kCompute, "a", milliseconds(1)));
  const int b = graph.add(sleeping_task(0, Lane::kCompute, "b", milliseconds(40)));
  const int c = graph.add(sleeping_task(1, Lane::kCompute, "c", milliseconds(40)));
  const int d = graph.add(sleeping_task(0, Lane::kCompute, "d", milliseconds(1)));
  graph.add_dependency(a, b);
  graph.add_dependency(a, c);
  graph.add_dependency(b, d);
  graph.add_dependency(c, d);
  {
    Scheduler scheduler({2, 2, 1, {Lane::kCopyIn}});
    const auto t = scheduler.run(graph);
    EXPECT_TRUE(overlap(t[static_cast<size_t>(b)], t[static_cast<size_t>(c)]));
    EXPECT_GE(t[static_cast<size_t>(d)].start_us,
              std::max(t[static_cast<size_t>(b)].end_us, t[static_cast<size_t>(c)].end_us));
  }
  {
    // One inter-op thread: the two devices take turns, so the branches cannot overlap.
    Scheduler scheduler({2, 1, 1, {Lane::kCopyIn}});
    const auto t = scheduler.run(graph);
    EXPECT_FALSE(overlap(t[static_cast<size_t>(b)], t[static_cast<size_t>(c)]));
    EXPECT_GE(t[static_cast<size_t>(d)].end_us - t[static_cast<size_t>(a)].start_us, 80'000.0);
  }
}

TEST(Scheduler, CopyLaneOverlapsComputeOnTheSameDevice) {
  TaskGraph graph;
  const int compute = graph.add(sleeping_task(0, Lane::kCompute, "compute", milliseconds(40)));
  const int copy = graph.add(sleeping_task(0, Lane::kCopyIn, "copy", milliseconds(40)));
  Scheduler scheduler({1, 1, 1, {Lane::kCopyIn}});
  const auto t = scheduler.run(graph);
  EXPECT_TRUE(overlap(t[static_cast<size_t>(compute)], t[static_cast<size_t>(copy)]));
}

TEST(Scheduler, TasksGetTheirWorkersThreads) {
  TaskGraph graph;
  std::atomic<int> compute_threads{0}, copy_threads{0};
  graph.add({0, Lane::kCompute, "compute", [&](TaskContext& c) { compute_threads = c.parallel.threads(); }});
  graph.add({0, Lane::kCopyIn, "copy", [&](TaskContext& c) { copy_threads = c.parallel.threads(); }});
  Scheduler scheduler({1, 1, 3, {Lane::kCopyIn}});
  scheduler.run(graph);
  EXPECT_EQ(compute_threads.load(), 3);
  EXPECT_EQ(copy_threads.load(), 1);
}

TEST(Scheduler, ComputeThreadCpusFillTheMaskWorkerByWorker) {
  SchedulerConfig two_devices{2, 2, 1, {Lane::kCopyIn}, true};
  EXPECT_EQ(compute_thread_cpus(two_devices, {3, 5, 8}), (std::vector<int>{3, 5}));
  SchedulerConfig pooled{1, 1, 2, {Lane::kCopyIn}, true};
  EXPECT_EQ(compute_thread_cpus(pooled, {3, 5}), (std::vector<int>{3, 5}));
  SchedulerConfig two_pools{2, 2, 2, {Lane::kCopyIn}, true};
  EXPECT_EQ(compute_thread_cpus(two_pools, {0, 1, 2, 3}), (std::vector<int>{0, 1, 2, 3}));
  // More compute threads than CPUs: the kernel places them.
  EXPECT_TRUE(compute_thread_cpus(two_pools, {0, 1, 2}).empty());
  two_devices.pin_compute_threads = false;
  EXPECT_TRUE(compute_thread_cpus(two_devices, {0, 1}).empty());
}

TEST(Scheduler, PinnedComputeWorkersRunOnTheirCpus) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU: two compute workers cannot have one each";
  TaskGraph graph;
  std::atomic<int> on_device_0{-1}, on_device_1{-1};
  graph.add({0, Lane::kCompute, "device 0", [&](TaskContext&) { on_device_0 = sched_getcpu(); }});
  graph.add({1, Lane::kCompute, "device 1", [&](TaskContext&) { on_device_1 = sched_getcpu(); }});
  Scheduler scheduler({2, 2, 1, {Lane::kCopyIn}, true});
  ASSERT_EQ(scheduler.pinned_cpus(), (std::vector<int>{cpus[0], cpus[1]}));
  for (int repeat = 0; repeat < 3; ++repeat) {
    scheduler.run(graph);
    EXPECT_EQ(on_device_0.load(), cpus[0]);
    EXPECT_EQ(on_device_1.load(), cpus[1]);
  }
  Scheduler unpinned({2, 2, 1, {Lane::kCopyIn}});
  EXPECT_TRUE(unpinned.pinned_cpus().empty());
}

TEST(Scheduler, DeadlineNamesTheRunningTaskAndRunsNothingAfterIt) {
  TaskGraph graph;
  std::atomic<int> slow_runs{0}, later_runs{0};
  const int fast = graph.add(sleeping_task(0, Lane::kCompute, "fast op", milliseconds(1)));
  const int slow = graph.add(sleeping_task(1, Lane::kCompute, "slow op on device 1", milliseconds(300), &slow_runs));
  const int later = graph.add(sleeping_task(0, Lane::kCompute, "later op", milliseconds(1), &later_runs));
  graph.add_dependency(fast, slow);
  graph.add_dependency(slow, later);
  Scheduler scheduler({2, 2, 1, {Lane::kCopyIn}});
  const auto start = std::chrono::steady_clock::now();
  try {
    scheduler.run(graph, std::chrono::microseconds(50'000));
    FAIL() << "the deadline did not fire";
  } catch (const RunError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("deadline of 50 ms"), std::string::npos) << message;
    EXPECT_NE(message.find("slow op on device 1"), std::string::npos) << message;
    EXPECT_EQ(message.find("later op"), std::string::npos) << message;
  }
  // The running kernel was allowed to finish (no thread is killed mid-op); nothing after it started.
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(250));
  EXPECT_EQ(slow_runs.load(), 1);
  EXPECT_EQ(later_runs.load(), 0);
  // The scheduler is usable again after an aborted run.
  const auto t = scheduler.run(graph);
  EXPECT_EQ(later_runs.load(), 1);
  EXPECT_GE(t[static_cast<size_t>(later)].start_us, t[static_cast<size_t>(slow)].end_us);
}

TEST(Scheduler, AFailingTaskIsNamedAndStopsTheRun) {
  TaskGraph graph;
  std::atomic<int> after_runs{0};
  const int failing = graph.add({1, Lane::kCopyIn, "broken copy", [](TaskContext&) {
                                   throw std::runtime_error("bad bytes");
                                 }});
  const int after = graph.add(sleeping_task(0, Lane::kCompute, "after", milliseconds(1), &after_runs));
  graph.add_dependency(failing, after);
  Scheduler scheduler({2, 2, 1, {Lane::kCopyIn}});
  try {
    scheduler.run(graph);
    FAIL() << "no error";
  } catch (const RunError& e) {
    EXPECT_STREQ(e.what(), "broken copy (device 1, copy-in lane) failed: bad bytes");
  }
  EXPECT_EQ(after_runs.load(), 0);
}

TEST(Scheduler, ACycleIsReportedNotWaitedOnForever) {
  TaskGraph graph;
  const int root = graph.add(sleeping_task(0, Lane::kCompute, "root", milliseconds(0)));
  const int x = graph.add(sleeping_task(0, Lane::kCompute, "x", milliseconds(0)));
  const int y = graph.add(sleeping_task(0, Lane::kCompute, "y", milliseconds(0)));
  graph.add_dependency(root, x);
  graph.add_dependency(x, y);
  graph.add_dependency(y, x);
  Scheduler scheduler({1, 1, 1, {Lane::kCopyIn}});
  try {
    scheduler.run(graph);
    FAIL() << "no error";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("2 of 3 tasks can never start"), std::string::npos) << e.what();
  }
  TaskGraph closed;
  const int p = closed.add(sleeping_task(0, Lane::kCompute, "p", milliseconds(0)));
  const int q = closed.add(sleeping_task(0, Lane::kCompute, "q", milliseconds(0)));
  closed.add_dependency(p, q);
  closed.add_dependency(q, p);
  EXPECT_THROW(scheduler.run(closed), RunError);
}

TEST(Scheduler, EmptyGraphAndBadTasks) {
  Scheduler scheduler({2, 1, 1, {Lane::kCopyIn}});
  EXPECT_TRUE(scheduler.run(TaskGraph{}).empty());
  TaskGraph graph;
  graph.add(sleeping_task(2, Lane::kCompute, "on a third device", milliseconds(0)));
  EXPECT_THROW(scheduler.run(graph), std::logic_error);
  TaskGraph other_lane;
  other_lane.add(sleeping_task(0, Lane::kHost, "host work", milliseconds(0)));
  EXPECT_THROW(scheduler.run(other_lane), std::logic_error);
}

TEST(TaskGraph, CountsDependenciesOnce) {
  TaskGraph graph;
  const int a = graph.add(sleeping_task(0, Lane::kCompute, "a", milliseconds(0)));
  const int b = graph.add(sleeping_task(3, Lane::kCopyIn, "b", milliseconds(0)));
  graph.add_dependency(a, b);
  graph.add_dependency(a, b);
  EXPECT_EQ(graph.dependency_count(b), 1);
  EXPECT_EQ(graph.successors(a), std::vector<int>{b});
  EXPECT_EQ(graph.device_count(), 4);
  EXPECT_THROW(graph.add_dependency(a, a), std::logic_error);
}

}  // namespace
}  // namespace scheduler_test
}  // namespace splitscope
