// The simulator's rate (issue 5): simulated plan ops per second on one core,
// on a plan of over a million ops, the lstm net (8 stacked layers of 1024)
// unrolled over 8448 steps and pipelined over 8 devices with 8 micro-batches:
// 8 · 8448 · 8 cells + 7 · 8448 · 8 transfers + the head = 1,013,776 ops.
// Target (issue 14): >= 20 M ops/s; and >= 1,000 plans/s for BM_EvaluatePlan.
//
//   build/bench/bench_sim --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// BM_Simulate times a whole prediction (reading and pricing every op, the
// discrete-event run, the Timeline) on h100-nvlink-8; BM_SimulateBehindOneBus
// the same plan with all 8 devices behind one host bus, so that concurrent
// transfers share links and flow starts and ends re-share bandwidth;
// BM_SimulateUntilDeadline the first under a deadline never reached.
// ops/s is per CPU second (Google Benchmark's default), so that other load on
// a shared machine shows in real time, not in the figure. Freeing the
// returned Timeline (80 MB of spans) is left out of the timing, and so is a
// first half-second of runs: a process's first simulation of this plan took
// 250 ms more than the next ones here, nearly all of it in the kernel's
// page faults (perf: clear_page_erms), which a search running many
// simulations pays once.

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <string>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "partitioners/partitioner.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/costs/model_error.hpp"
#include "sim/costs/op_cost_model.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace {

constexpr int kSteps = 8448;
constexpr int kDevices = 8;
constexpr int kMicrobatches = 8;

Plan lstm_pipeline() {
  const std::string network = R"({"name": "lstm-long", "batch": 64, "input": [)" +
                              std::to_string(kSteps) + R"(, 1024], "layers": [
      {"type": "lstm", "hidden": 1024, "layers": 8, "return_sequences": false, "name": "lstm"},
      {"type": "dense", "units": 1000, "name": "classifier"},
      {"type": "softmax", "name": "probs"}]})";
  auto graph = std::make_shared<const Graph>(lower(parse_model_text(network, "lstm-long.json")));
  PartitionOptions options;
  options.devices = kDevices;
  options.microbatches = kMicrobatches;
  return make_partitioner("pipeline")->partition(graph, options);
}

void run(benchmark::State& state, const Machine& machine, bool with_deadline = false) {
  const Plan plan = lstm_pipeline();
  const Simulator simulator(machine);
  // An hour away: the clock is looked at as under a search's budget, and never stops the run.
  const SimulationDeadline deadline(SimulationDeadline::Clock::now() + std::chrono::hours(1));
  double makespan_ms = 0;
  for (auto _ : state) {
    Timeline timeline = with_deadline ? *simulator.simulate(plan, deadline) : simulator.simulate(plan);
    makespan_ms = timeline.makespan_us() / 1e3;
    benchmark::DoNotOptimize(timeline.spans.data());
    // Freeing the million spans is the caller's business, not the simulation's.
    state.PauseTiming();
    timeline = Timeline{};
    state.ResumeTiming();
  }
  state.counters["plan_ops"] = static_cast<double>(plan.ops.size());
  state.counters["ops/s"] = benchmark::Counter(static_cast<double>(plan.ops.size()),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["makespan_ms"] = makespan_ms;
}

void BM_Simulate(benchmark::State& state) { run(state, load_machine("h100-nvlink-8")); }
BENCHMARK(BM_Simulate)->Unit(benchmark::kMillisecond)->MinWarmUpTime(0.5)->MinTime(2);

/// BM_Simulate under a deadline (simulation_deadline.hpp), as `search` prices
/// its candidates: what looking at the clock costs.
void BM_SimulateUntilDeadline(benchmark::State& state) { run(state, load_machine("h100-nvlink-8"), true); }
BENCHMARK(BM_SimulateUntilDeadline)->Unit(benchmark::kMillisecond)->MinWarmUpTime(0.5)->MinTime(2);

void BM_SimulateBehindOneBus(benchmark::State& state) {
  Machine machine = load_machine("h100-nvlink-8");
  machine.topology.kind = TopologyKind::kHostStaged;
  machine.topology.devices_per_bus = kDevices;
  machine.topology.bus = {12, 10};
  run(state, machine);
}
BENCHMARK(BM_SimulateBehindOneBus)->Unit(benchmark::kMillisecond)->MinWarmUpTime(0.5)->MinTime(2);

// What an automatic search pays per candidate (issue 14: >= 1,000 a second):
// a 100-layer network (dense 1024 + relu, batch 64) partitioned over 8
// devices and simulated, Timeline included (BM_EvaluatePlan), and the
// simulation of the same plan alone (BM_SimulatePlan). The strategy is the
// benchmark's argument; pipeline runs 8 micro-batches.
Graph hundred_layers() {
  std::string layers;
  for (int i = 0; i < 100; ++i) {
    layers += fmt::format(R"({}{{"type": "dense", "units": 1024, "activation": "relu", "name": "d{}"}})",
                          i == 0 ? "" : ", ", i);
  }
  const std::string network =
      R"({"name": "hundred", "batch": 64, "input": [1024], "layers": [)" + layers + "]}";
  return lower(parse_model_text(network, "hundred.json"));
}

/// The options a search would try `strategy` with on 8 devices.
PartitionOptions search_options(const std::string& strategy) {
  PartitionOptions options;
  options.devices = kDevices;
  options.microbatches = strategy == "pipeline" ? kMicrobatches : 1;
  return options;
}

void count_plans(benchmark::State& state, size_t plan_ops) {
  state.counters["plan_ops"] = static_cast<double>(plan_ops);
  state.counters["plans/s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_EvaluatePlan(benchmark::State& state, const std::string& strategy) {
  const auto graph = std::make_shared<const Graph>(hundred_layers());
  const Simulator simulator(load_machine("h100-nvlink-8"));
  size_t ops = 0;
  for (auto _ : state) {
    const Plan plan = make_partitioner(strategy)->partition(graph, search_options(strategy));
    const Timeline timeline = simulator.simulate(plan);
    ops = plan.ops.size();
    benchmark::DoNotOptimize(timeline.spans.data());
  }
  count_plans(state, ops);
}

void BM_SimulatePlan(benchmark::State& state, const std::string& strategy) {
  const auto graph = std::make_shared<const Graph>(hundred_layers());
  const Simulator simulator(load_machine("h100-nvlink-8"));
  const Plan plan = make_partitioner(strategy)->partition(graph, search_options(strategy));
  for (auto _ : state) {
    const Timeline timeline = simulator.simulate(plan);
    benchmark::DoNotOptimize(timeline.spans.data());
  }
  count_plans(state, plan.ops.size());
}

/// The run's own error (sim/costs/model_error.hpp), which `run` and `compare` add to every simulated run's report:
/// one pass over the plan's ops, to set beside BM_Simulate's simulation of the same million-op plan.
void BM_ModelError(benchmark::State& state) {
  const Plan plan = lstm_pipeline();
  const OpCostModel costs(load_machine("h100-nvlink-8"));
  for (auto _ : state) benchmark::DoNotOptimize(plan_model_error(costs, plan));
  state.counters["ops/s"] = benchmark::Counter(static_cast<double>(plan.ops.size()),
                                               benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ModelError)->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_EvaluatePlan, pipeline, std::string("pipeline"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EvaluatePlan, horizontal, std::string("horizontal"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EvaluatePlan, tensor, std::string("tensor"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SimulatePlan, pipeline, std::string("pipeline"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SimulatePlan, tensor, std::string("tensor"))->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace splitscope

BENCHMARK_MAIN();
