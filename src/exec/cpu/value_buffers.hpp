#pragma once
/// \file
/// The memory of a run: one buffer per Plan value, allocated (and touched)
/// once before the timed runs. Also fills the network inputs and assembles the
/// network output, both outside the timed part of a run.

#include <cstdint>
#include <vector>

#include "exec/cpu/channel_block.hpp"
#include "exec/executor.hpp"

namespace splitscope {

class ValueBuffers {
 public:
  /// One zeroed buffer per activation value of `plan` (parameter values
  /// live in the WeightStore).
  explicit ValueBuffers(const Plan& plan);

  /// The storage of value `id`, laid out as plan.hpp says.
  ChannelBlock block(int id) { return blocks_.at(static_cast<size_t>(id)); }
  ConstChannelBlock block(int id) const { return blocks_.at(static_cast<size_t>(id)); }
  /// Bytes held by all buffers.
  int64_t bytes() const { return bytes_; }

 private:
  std::vector<std::vector<float>> storage_;
  std::vector<ChannelBlock> blocks_;
  int64_t bytes_ = 0;
};

/// Writes params.hpp's input_value(seed, ·) into every network-input value
/// (Plan::inputs): the whole input, or the rows x[b, t, :] of a step input.
void fill_network_inputs(const Plan& plan, uint64_t seed, ValueBuffers& buffers);

/// The whole network input [batch, ...input shape] for `seed`, as
/// fill_network_inputs() lays it out; a reference for tests.
HostTensor network_input(const Graph& graph, uint64_t seed);

/// Gathers Plan::outputs into the network output [batch, ...output shape].
/// Checks that they tile it exactly.
HostTensor assemble_output(const Plan& plan, const ValueBuffers& buffers);

}  // namespace splitscope
