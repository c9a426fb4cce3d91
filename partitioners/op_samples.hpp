#pragma once
/// \file
/// The op slices the strategies make, and plans that run one of them alone:
/// what a calibrator times (the GPU's in exec/cuda, the CPU's in exec/cpu),
/// each sample keyed by op_signature(), the key the simulator's op table uses.

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/slice.hpp"
#include "plan/plan.hpp"

namespace splitscope {

/// One op slice to time: `slice` of `node` in `graph`.
struct OpSample {
  std::shared_ptr<const Graph> graph;
  NodeId node = 0;
  Slice slice;
  std::string signature;
};

/// The distinct op slices (by signature) of the compute ops of `plans`.
std::vector<OpSample> op_samples_from_plans(const std::vector<Plan>& plans);

/// The distinct op slices of `graph` that its splits produce: every op whole,
/// split evenly along its output channels into each of `channel_splits`
/// parts, and over each of `batch_splits` equal parts of the batch (pipeline
/// micro-batches). Grouped convolutions split along whole groups where the
/// split allows it, as the vertical strategy does.
std::vector<OpSample> op_samples_from_graph(const std::shared_ptr<const Graph>& graph,
                                            const std::vector<int>& channel_splits,
                                            const std::vector<int>& batch_splits);

/// A one-device plan of one compute op: `sample`'s slice, its inputs given
/// (values with no producer, holding exactly the channels the op reads), its
/// outputs the plan's outputs. Calibration times each sample this way.
Plan single_op_plan(const OpSample& sample);

/// `copies` devices, each running `sample`'s op on inputs of its own, all at
/// once: how an op runs when every device of a pooled machine (a CPU's cores)
/// is busy. `copies` = 1 is single_op_plan(). With `runs_per_device` > 1
/// each device runs the op that many times back to back (one output each),
/// so that the later runs find the device as a plan's next op finds it,
/// its threads awake (a parked thread costs a wake-up, which a run pays once).
/// `idle_devices` more devices, after the busy ones, run nothing: the op
/// timed on a device of a pooled machine with the others idle.
Plan replicated_op_plan(const OpSample& sample, int copies, int runs_per_device = 1, int idle_devices = 0);

}  // namespace splitscope
