#pragma once
// Small fixtures for the demo's tests: demo graphs and plans, and a machine
// whose cells all cost the same and whose links are free, for closed forms.

#include <memory>
#include <string>

#include "demo/rnn_demo_model.hpp"
#include "plan/plan.hpp"
#include "sim/machine/machine.hpp"

namespace splitscope::testing {

/// The demo shape with the given sizes.
RnnDemoShape demo_shape(const std::string& cell, int64_t layers, int64_t hidden, int64_t steps, int64_t batch);

/// A checked plan of `strategy` for `shape` over `devices` devices.
std::shared_ptr<const Plan> demo_plan(const RnnDemoShape& shape, const std::string& strategy, int devices,
                                      int microbatches = 1);

/// `devices` devices of `gflops` GFLOP/s (fp32, efficiency 1, no launch
/// overhead) with so much memory bandwidth that every recurrent cell is
/// compute-bound, joined by a switch so fast (1e9 GB/s per port, no
/// latency) that a transfer of a few KiB takes under 1e-11 µs: "free links".
Machine free_link_machine(int devices, double gflops);

}  // namespace splitscope::testing
