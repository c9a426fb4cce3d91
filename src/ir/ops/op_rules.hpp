#pragma once
/// \file
/// Rules several op definitions share (ops/*.cpp only): the byte counts of
/// docs/network-format.md for element-wise work, the usual input ranges and signatures.

#include <cstdint>
#include <string>

#include "ir/ops/op_def.hpp"
#include "ir/slice.hpp"

namespace splitscope::op_rules {

inline constexpr int64_t kFloat = sizeof(float);

/// Float32 bytes the slice writes to output 0: rows × its channels × inner elements.
int64_t output_bytes(const OpNode& node, const Slice& slice);
/// An element-wise or per-channel op: writes its slice and reads the matching
/// channels of input 0 (bytes only, no FLOPs).
SliceCost channel_local_cost(const OpNode& node, const Slice& slice);
/// Reads its inputs in full: every channel of the slot.
Range all_channels(const OpNode& node, const Slice& slice, int slot);
/// Reads the channels it writes.
Range same_channels(const OpNode& node, const Slice& slice, int slot);
/// "relu:b64:n8192": the kind, the rows and the elements per row it writes.
std::string elements_signature(const OpNode& node, const Slice& slice);
/// One kernel call per slice (OpDef::device_calls of most kinds).
int one_device_call(const SliceCalls& calls);
/// Initial weights keep activations at a steady scale through deep stacks:
/// variance 2/fan_in before a ReLU (He), 1/fan_in otherwise.
float weight_scale(int64_t fan_in, Activation activation);

}  // namespace splitscope::op_rules

namespace splitscope::op_rules {
/// "maxpool:b64:c96:h55:w55:k3x3:s2x2": a pooling slice's shape.
std::string pool_signature(const OpNode& node, const Slice& slice);
}  // namespace splitscope::op_rules
