#pragma once
/// \file
/// The simulator as an Executor: predicts a Plan's Timeline on a Machine
/// instead of measuring it, so that `run` and `compare` treat it like the cpu
/// and cuda backends. A simulation is deterministic, so run() gives one
/// timeline whatever the repeats, and no output tensor.
///
/// It is where a plan's devices meet the machine's: its placement
/// (device_placement.hpp) says which machine device each plan device runs
/// on, and only its routes see the mapping, so the timeline keeps the plan's
/// device numbers.

#include <optional>
#include <string_view>
#include <vector>

#include "exec/executor.hpp"
#include "exec/mode_runtimes.hpp"
#include "sim/machine/device_placement.hpp"
#include "sim/machine/machine.hpp"
#include "sim/costs/op_cost_model.hpp"
#include "sim/costs/op_jitter.hpp"
#include "sim/engine/simulation_deadline.hpp"
#include "sim/machine/topology.hpp"

namespace splitscope {

class Simulator : public Executor, public InputStreamRuntime, public ParameterServerRuntime {
 public:
  /// Checks `machine` by the machine-file rules (InputError otherwise);
  /// `placement` maps each plan's devices onto the machine's.
  explicit Simulator(Machine machine, PlacementMode placement = PlacementMode::kDefault);

  std::string_view name() const override { return "sim"; }
  /// One predicted timeline (RunResult::timelines has one entry), RunInfo
  /// with backend "sim", measured false, device_mode "simulated", the
  /// machine's name, device name and per-device memory (which the report
  /// checks the plan's peak memory against: report/memory_fit.hpp), and facts
  /// (topology, matrix math, calibrated ops). A plan too large for the
  /// devices' memory is still simulated; the report says it does not fit.
  /// RunInfo::placement says where the plan's devices ran and the bytes that
  /// crossed nodes; under `topology`, also the default mapping's bytes and
  /// makespan (a second simulation, where the mappings differ).
  /// InputError when the plan has more devices than the machine.
  /// Alike replicas (equal rows) of one device each, with no jitter, on the default placement
  /// of a machine whose devices neither share a pool nor a host lane: it
  /// plays replica 0 and the collectives spanning the replicas over every
  /// device (replica_view.hpp), the same times as the whole plan's.
  bool runs_replicas_once(const Plan& plan, const RunOptions& options) const override;
  RunResult run(const Plan& plan, const RunOptions& options) override;

  /// The plan's predicted timeline behind an input pipeline: the host
  /// prepares a batch in `cost_us_per_sample` × batch, the copies take what
  /// price_input_copies() charges, each step computes in run()'s makespan;
  /// steps follow schedule_input_pipeline(): max(warmup, 1) that fill the
  /// pipeline, then `repeats` timed ones (their windows, input_pipeline.hpp).
  RunResult run_input_stream(const Plan& plan, const RunOptions& options, const InputPipelineOptions& input) override;

  /// Parameter-server training predicted (ps_simulation.hpp), with this
  /// simulator's RunInfo; its `--jitter` noise is per worker step.
  RunResult run_parameter_server(const Plan& plan, const RunOptions& options,
                                 const ParameterServerOptions& ps) override;
  /// The predicted timeline alone, under this simulator's placement.
  Timeline simulate(const Plan& plan) const;
  /// The same unless `deadline` passes first: then nullopt, the plan cut
  /// off (engine.hpp, simulate_plan_until). What `search` prices under its budget.
  std::optional<Timeline> simulate(const Plan& plan, const SimulationDeadline& deadline) const;

  /// Where `plan`'s devices run under this simulator's placement, and the
  /// bytes that cross nodes there (and under the default mapping, for
  /// `topology`); no makespans. The default placement on a multi-node
  /// machine reads the plan's traffic too, to report its bytes across nodes.
  PlacementInfo place(const Plan& plan) const;

  const Machine& machine() const { return machine_; }
  const Topology& topology() const { return topology_; }
  const OpCostModel& costs() const { return costs_; }

 private:
  void check_devices(const Plan& plan) const;
  RunInfo info(const Plan& plan) const;
  /// `plan` on `topology` (the machine's, or a placed copy).
  Timeline simulate_on(const Plan& plan, const Topology& topology, const OpJitter* jitter = nullptr) const;
  /// The costs `plan` is priced with: this simulator's, or (a pooled plan on
  /// fewer devices than the machine's, a plan in half) a model made in `own`.
  const OpCostModel& costs_for(const Plan& plan, std::optional<OpCostModel>& own) const;

  Machine machine_;
  PlacementMode placement_ = PlacementMode::kDefault;
  Topology topology_;
  OpCostModel costs_;
};

/// A predicted timeline of `plan` on `machine` (builds a Simulator).
Timeline simulate(const Plan& plan, const Machine& machine);

}  // namespace splitscope
