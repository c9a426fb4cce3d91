// Scheduler overhead per op: task graphs of empty kernels, so that all that is
// timed is the runtime itself (counters, queues, wake-ups, the clock reads
// around each task). "per_op" is wall time per task; the target is <= 5 µs.

#include <benchmark/benchmark.h>

#include <random>

#include "exec/cpu/scheduler.hpp"

namespace splitscope {
namespace {

constexpr int kTasks = 2000;

Task empty_task(int device, Lane lane) {
  return {device, lane, "empty", [](TaskContext&) {}};
}

void run_graph(benchmark::State& state, const TaskGraph& graph, int devices) {
  Scheduler scheduler({devices, devices, 1, {Lane::kCopyIn}});
  for (auto _ : state) benchmark::DoNotOptimize(scheduler.run(graph));
  state.counters["per_op"] = benchmark::Counter(static_cast<double>(graph.size()) * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

/// One device, each task after the previous: the worker feeds itself.
void BM_Chain(benchmark::State& state) {
  TaskGraph graph;
  for (int i = 0; i < kTasks; ++i) {
    graph.add(empty_task(0, Lane::kCompute));
    if (i > 0) graph.add_dependency(i - 1, i);
  }
  run_graph(state, graph, 1);
}

/// A chain that alternates between two devices: every task wakes another thread (the worst case).
void BM_PingPong(benchmark::State& state) {
  TaskGraph graph;
  for (int i = 0; i < kTasks; ++i) {
    graph.add(empty_task(i % 2, Lane::kCompute));
    if (i > 0) graph.add_dependency(i - 1, i);
  }
  run_graph(state, graph, 2);
}

/// Independent tasks spread over `devices` devices.
void BM_Wide(benchmark::State& state) {
  const int devices = static_cast<int>(state.range(0));
  TaskGraph graph;
  for (int i = 0; i < kTasks; ++i) graph.add(empty_task(i % devices, Lane::kCompute));
  run_graph(state, graph, devices);
}

/// Plan-shaped: layers of 4 devices' compute tasks, each layer followed by a collective
/// task per device on its copy lane reading every compute task of the layer (like a
/// vertically split network's all-gathers).
void BM_PlanShaped(benchmark::State& state) {
  constexpr int kDevices = 4;
  TaskGraph graph;
  std::vector<int> previous;
  while (graph.size() + 2 * kDevices <= kTasks) {
    std::vector<int> compute;
    for (int d = 0; d < kDevices; ++d) {
      const int id = graph.add(empty_task(d, Lane::kCompute));
      if (!previous.empty()) graph.add_dependency(previous[static_cast<size_t>(d)], id);
      compute.push_back(id);
    }
    std::vector<int> gathered;
    for (int d = 0; d < kDevices; ++d) {
      const int id = graph.add(empty_task(d, Lane::kCopyIn));
      for (int c : compute) graph.add_dependency(c, id);
      gathered.push_back(id);
    }
    previous = gathered;
  }
  run_graph(state, graph, kDevices);
}

BENCHMARK(BM_Chain)->Repetitions(10)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PingPong)->Repetitions(10)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Wide)->Arg(2)->Arg(4)->Repetitions(10)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanShaped)->Repetitions(10)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace splitscope

BENCHMARK_MAIN();
