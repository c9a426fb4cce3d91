#pragma once
// Runs a DeviceProgram on the host, so that everything the plan compiler
// decides — offsets, strides, weight slices, copies, the cross-stream waits —
// is tested without a GPU. Each step does on host vectors what the CUDA
// runner asks cuBLAS, cuDNN, memcpy or our kernels to do. It also checks what
// a GPU would not report: every access stays inside its buffer, compute steps
// touch only their own device's buffers, and copies go where their streams are.
//
// Streams are simulated: a step may run once it heads its stream's queue and
// every step it waits for has run. With a non-zero schedule seed the next
// step is picked at random among those ready, so a missing wait shows up as a
// read of a buffer not yet written (buffers start as NaN).

#include <cstdint>
#include <vector>

#include "exec/cuda/device_program.hpp"
#include "exec/executor.hpp"
#include "plan/plan.hpp"

namespace splitscope::testing {

struct Interpretation {
  HostTensor output;       ///< the network output assembled from the plan's outputs
  std::vector<int> order;  ///< steps in the order they ran
  std::vector<std::vector<float>> values;  ///< per plan value, its buffer after the run
};

/// Interprets `program` (compiled from `plan`) with weights and inputs from
/// `seed`. schedule_seed 0 runs ready steps lowest index first; any other
/// value picks among ready steps at random. Throws std::logic_error on an
/// out-of-bounds access, a step touching another device's memory, or a deadlock.
Interpretation interpret(const Plan& plan, const gpu::DeviceProgram& program, uint64_t seed,
                         uint32_t schedule_seed = 0);

/// Interprets `program` `runs` times on the same memory (weights, optimizer
/// state and all: a training plan's steps), returning the network output of
/// each run.
std::vector<HostTensor> interpret_runs(const Plan& plan, const gpu::DeviceProgram& program, uint64_t seed, int runs,
                                       uint32_t schedule_seed = 0);

}  // namespace splitscope::testing
