// Network files, graph networks included (named inputs, add, concat,
// branches), past the parser: lowered, then partitioned by every strategy
// for 1 to 4 devices (and `hybrid` by a few tensor x pipeline x data degree
// triples of at most 4 devices), forward and (where the network has
// gradients) training, each plan checked (plan/plan_check.hpp) and simulated on
// a small machine (h100-pcie-4), as `compare --backend sim` does. What it
// checks beyond "no crash": a strategy may refuse a network or a device count
// only with an InputError; a broken plan invariant or SPLITSCOPE_CHECK
// (std::logic_error) is always a crash, since a user's file reached it; a
// predicted makespan is finite and not negative.
// Bounded so that every input runs in milliseconds: networks whose lowered
// graph has more than kMaxPlansFuzzOps ops, or a batch above
// kMaxPlansFuzzBatch, are rejected (-1: libFuzzer keeps none of them).

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"

namespace {

constexpr size_t kMaxPlansFuzzOps = 64;
constexpr int64_t kMaxPlansFuzzBatch = 64;
constexpr int kMaxPlansFuzzDevices = 4;

/// The machine every plan is simulated on: built once (parsing it is most of a small input's time).
const splitscope::Simulator& plans_fuzz_simulator() {
  static const splitscope::Simulator simulator(splitscope::load_machine("h100-pcie-4"));
  return simulator;
}

[[noreturn]] void plans_fuzz_bug(const std::string& where, const std::exception& e) {
  std::fprintf(stderr, "fuzz: %s: %s\n", where.c_str(), e.what());
  std::abort();
}

/// `hybrid`'s degrees (`--degrees T,P,D`) and how its micro-batches run.
struct HybridFuzzCase {
  splitscope::ParallelDegrees degrees;
  int microbatches = 1;
  splitscope::PipelineSchedule schedule = splitscope::PipelineSchedule::kGpipe;
};

/// The hybrid cases every input meets: each kind of parallelism paired with
/// each other over the machine's 4 devices (or fewer), the pipeline ones
/// also with micro-batches under both schedules. A degree a network cannot
/// take (more stages than layers, a tensor degree past a layer's outputs, a
/// data degree past the batch) is an InputError, like any other refusal.
const std::vector<HybridFuzzCase>& hybrid_fuzz_cases() {
  using splitscope::PipelineSchedule;
  static const std::vector<HybridFuzzCase> cases = {
      {{.tensor = 2, .pipeline = 2, .data = 1}, 1, PipelineSchedule::kGpipe},
      {{.tensor = 2, .pipeline = 1, .data = 2}, 1, PipelineSchedule::kGpipe},
      {{.tensor = 1, .pipeline = 2, .data = 2}, 2, PipelineSchedule::kGpipe},
      {{.tensor = 2, .pipeline = 2, .data = 1}, 3, PipelineSchedule::kOneForwardOneBackward},
      {{.tensor = 1, .pipeline = 3, .data = 1}, 1, PipelineSchedule::kGpipe},
  };
  return cases;
}

/// One strategy's plan of `graph` over `devices`: checked and simulated.
/// An InputError is the strategy refusing; anything else is a finding.
/// `hybrid` (only with `hybrid_case`) must also give a plan over exactly
/// T*P*D devices that carries the degrees it was given.
void plan_and_simulate(const std::shared_ptr<const splitscope::Graph>& graph, const std::string& strategy,
                       int devices, int microbatches, const HybridFuzzCase* hybrid_case = nullptr) {
  using namespace splitscope;
  std::string where = strategy + " over " + std::to_string(devices) + " devices" +
                      (graph->is_training() ? ", training" : "");
  if (hybrid_case) {
    const ParallelDegrees& k = hybrid_case->degrees;
    where += " (degrees " + std::to_string(k.tensor) + "," + std::to_string(k.pipeline) + "," +
             std::to_string(k.data) + ", " + std::to_string(microbatches) + " micro-batches)";
  }
  try {
    PartitionOptions options;
    options.devices = devices;
    options.microbatches = microbatches;
    if (hybrid_case) {
      options.degrees = hybrid_case->degrees;
      options.schedule = hybrid_case->schedule;
    }
    const auto partitioner = make_partitioner(strategy);
    if (microbatches > 1 && !partitioner->traits().microbatched) return;
    const Plan plan = make_plan(*partitioner, graph, options);
    check(plan);
    if (hybrid_case && (plan.devices != devices || plan.degrees != hybrid_case->degrees)) {
      std::fprintf(stderr, "fuzz: %s: the plan is over %d devices with %s degrees\n", where.c_str(), plan.devices,
                   plan.degrees ? "other" : "no");
      std::abort();
    }
    // ps's shards run outside the plan (ps_simulation.hpp); its plan is checked, not simulated alone.
    if (strategy == "ps") return;
    const double makespan = plans_fuzz_simulator().simulate(plan).makespan_us();
    if (!std::isfinite(makespan) || makespan < 0) {
      std::fprintf(stderr, "fuzz: %s: predicted makespan %g us\n", where.c_str(), makespan);
      std::abort();
    }
  } catch (const InputError&) {
  } catch (const std::logic_error& e) {
    plans_fuzz_bug(where, e);
  } catch (const std::exception& e) {
    if (fuzz::strict()) plans_fuzz_bug(where, e);
  }
}

void plan_every_strategy(const std::shared_ptr<const splitscope::Graph>& graph) {
  std::vector<std::string> strategies = splitscope::strategy_names();
  if (graph->is_training()) strategies.push_back("ps");
  for (const std::string& strategy : strategies) {
    for (int devices = 1; devices <= kMaxPlansFuzzDevices; ++devices) {
      plan_and_simulate(graph, strategy, devices, 1);
    }
  }
  plan_and_simulate(graph, "pipeline", 2, 3);  // micro-batches, where the batch splits
  for (const HybridFuzzCase& hybrid : hybrid_fuzz_cases()) {
    const splitscope::ParallelDegrees& k = hybrid.degrees;
    plan_and_simulate(graph, "hybrid", k.tensor * k.pipeline * k.data, hybrid.microbatches, &hybrid);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitscope;
  plans_fuzz_simulator();  // outside the strategies' try: a machine that does not load is no refusal
  std::shared_ptr<const Graph> forward;
  try {
    const Model model = parse_model_text(fuzz::as_text(data, size), "fuzz.json");
    if (model.batch > kMaxPlansFuzzBatch) return -1;
    forward = std::make_shared<const Graph>(lower(model));
  } catch (const InputError&) {
    return 0;
  } catch (const std::exception& e) {
    if (fuzz::strict()) plans_fuzz_bug("parse and lower", e);
    return 0;
  }
  if (forward->num_nodes() > kMaxPlansFuzzOps) return -1;
  plan_every_strategy(forward);
  std::shared_ptr<const Graph> training;
  try {
    training = std::make_shared<const Graph>(training_graph(*forward, Optimizer{}));
  } catch (const InputError&) {
    return 0;  // an op without a gradient rule yet
  } catch (const std::logic_error& e) {
    plans_fuzz_bug("training graph", e);
  } catch (const std::exception& e) {
    if (fuzz::strict()) plans_fuzz_bug("training graph", e);
    return 0;
  }
  if (training->num_nodes() <= 4 * kMaxPlansFuzzOps) plan_every_strategy(training);
  return 0;
}
