#pragma once
/// \file
/// The memory of a run: one buffer per Plan value, allocated (and touched)
/// once before the timed runs. Also fills the network inputs and assembles the
/// network output, both outside the timed part of a run.

#include <cstdint>
#include <functional>
#include <vector>

#include "exec/cpu/channel_block.hpp"
#include "exec/executor.hpp"

namespace splitscope {

class ValueBuffers {
 public:
  /// One zeroed buffer per activation value of `plan` (parameter values
  /// live in the WeightStore).
  explicit ValueBuffers(const Plan& plan);
  /// Buffers only for the values `keep` accepts; the others have no storage
  /// (a null block). One rank of a multi-process run holds its own device's
  /// values and no other (exec/mpi).
  ValueBuffers(const Plan& plan, const std::function<bool(const Value&)>& keep);

  /// Whether value `id` has storage here.
  bool holds(int id) const { return blocks_.at(static_cast<size_t>(id)).data != nullptr; }

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

/// How value `id` (not a parameter) is laid out, with no storage (a null
/// `data`): [rows][channels][inner] for an activation, one flat row for a
/// gradient (its weights' tensors end to end, as the WeightSlice lays them out).
ChannelBlock value_layout(const Plan& plan, const Value& value);

/// Writes params.hpp's input_value(seed, ·) into every network-input value
/// (Plan::inputs) held in `buffers`: the whole input, or the rows x[b, t, :]
/// of a step input.
void fill_network_inputs(const Plan& plan, uint64_t seed, ValueBuffers& buffers);

/// The whole network input [batch, ...input shape] for `seed`, as
/// fill_network_inputs() lays it out; a reference for tests.
HostTensor network_input(const Graph& graph, uint64_t seed);

/// Gathers Plan::outputs into the network output [batch, ...output shape].
/// Checks that they tile it exactly.
HostTensor assemble_output(const Plan& plan, const ValueBuffers& buffers);

}  // namespace splitscope
