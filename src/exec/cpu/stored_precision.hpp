#pragma once
/// \file
/// Where the cpu backend stores a plan's tensors at the plan's precision
/// (Plan::precision, ir/precision.hpp): which number format each tensor
/// class is kept in, and the writes that round to it (precision_rounding.hpp).
/// Every value keeps a float32 slot; what the plan stores in 2 bytes is
/// rounded where it is written:
/// - a compute or epilogue op's outputs, once the op has run (storing_outputs);
/// - the sums a reducing collective writes (round_in_place on each chunk);
/// - the network's inputs, once filled (round_network_inputs);
/// - the weights when made (WeightStore) and after each update, with the
///   optimizer's state (store_update).
/// Transfers and gathers copy values already rounded. The kernels compute
/// in float32 between writes and know nothing of any of this.

#include <span>

#include "exec/cpu/precision_rounding.hpp"
#include "exec/cpu/task_graph.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "ir/precision.hpp"
#include "plan/plan.hpp"

namespace splitscope {

/// The format of each tensor class at one precision (the classes of
/// ir/precision.hpp's StorageBytes).
struct StoredFormats {
  NumberFormat activation = NumberFormat::kFloat32;  ///< activations, their gradients, inputs and outputs
  NumberFormat weight = NumberFormat::kFloat32;      ///< the weights the products read (amp: the half copy)
  NumberFormat gradient = NumberFormat::kFloat32;    ///< weight gradients
  NumberFormat optimizer_state = NumberFormat::kFloat32;
  /// float32 master weights beside the weight copy, which the update writes
  /// and casts to the copy (amp); false where the weights are the masters.
  bool keeps_masters = false;

  bool all_float32() const {
    return activation == NumberFormat::kFloat32 && weight == NumberFormat::kFloat32 &&
           gradient == NumberFormat::kFloat32 && optimizer_state == NumberFormat::kFloat32;
  }
};

/// fp32 and tf32: float32 throughout (tf32 changes the products' math, not
/// storage); bf16, fp16: every class in that format; amp: bfloat16
/// activations, gradients and weight copy beside float32 masters and state.
StoredFormats stored_formats(Precision precision);

/// The format value `value` of `plan` is stored in (its class's).
NumberFormat value_format(const Plan& plan, const Value& value);

/// `work`, then op `op`'s outputs in `buffers` rounded to their formats;
/// `work` itself where every output is float32.
TaskFunction storing_outputs(const Plan& plan, const PlanOp& op, ValueBuffers& buffers, TaskFunction work);

/// Rounds the network inputs `fill_network_inputs()` wrote to the
/// activations' format. Labels and token ids are left as they are: they
/// stand for integers, which frameworks keep in integer tensors.
void round_network_inputs(const Plan& plan, ValueBuffers& buffers);

/// After an optimizer step on `masters` (and `state`, its values for those
/// weights): the state rounded to its format, and the weights the products
/// read made from the masters, rounded to the weights' format; `masters`
/// and `weights` are the same slice where the plan keeps no masters.
void store_update(const StoredFormats& formats, const WeightSlice& masters, WeightSlice& weights,
                  std::span<float> state);

}  // namespace splitscope
