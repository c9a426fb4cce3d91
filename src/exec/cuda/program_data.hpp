#pragma once
/// \file
/// The host-side data of a run: weight slices and network inputs from
/// params.hpp (filled before the runs, never timed), and the network output
/// assembled from the plan's output values afterwards. Plain C++: the CUDA
/// runner and the host interpreter of the tests share it.

#include <cstdint>
#include <vector>

#include "exec/cuda/device_program.hpp"
#include "exec/executor.hpp"
#include "plan/plan.hpp"

namespace splitscope::gpu {

/// The elements `gather` selects, in its packed order: for each row, the
/// columns of each block in turn. Large slices are filled on several threads.
std::vector<float> materialise(const WeightGather& gather, uint64_t seed);

/// The contents of a network-input value (plan.hpp): the rows and channels it
/// holds of the input [B, ...], or of a step input x[b, t, :] of a sequence.
std::vector<float> network_input(const Plan& plan, const Value& value, uint64_t seed);

/// An empty network output [B, ...output shape], zero-filled.
HostTensor make_output_tensor(const Plan& plan);

/// Writes the contents of output value `value` into its place in `output`.
void place_output_value(const Plan& plan, const Value& value, const std::vector<float>& data, HostTensor& output);

}  // namespace splitscope::gpu
