#pragma once
/// \file
/// Binds a compute or epilogue op of a Plan to its kernel: resolves, once at
/// setup, where each input slice is read (needed_input_channels() at its offset
/// in the input value), where the output goes and which weights it uses, and
/// returns the function a worker calls on every run.

#include <cstdint>

#include "exec/cpu/task_graph.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "plan/plan.hpp"

namespace splitscope {

/// True for the op kinds this backend has a kernel for (its kernel table).
bool has_cpu_kernel(OpKind kind);

/// True for the kinds whose kernel spreads its work over a device's
/// intra-op threads (the products: dense, conv2d, the cells and their
/// gradients); pooling, activations, softmax, add, concat and the copies run
/// on one thread, so a device of more threads runs them no faster.
bool cpu_kernel_splits_over_threads(OpKind kind);

/// Floats of per-device scratch `op` needs while it runs (im2col columns,
/// cell gates); 0 for most ops. A device runs its compute ops one at a time,
/// so one scratch buffer per device, of the largest need, serves them all.
int64_t compute_scratch_floats(const Plan& plan, const PlanOp& op);

/// The work of compute or epilogue op `op`. `scratch` holds at least
/// compute_scratch_floats(plan, op) floats. The returned function keeps
/// pointers into `buffers`, `scratch` and the weights (held by the function).
TaskFunction compute_task(const Plan& plan, const PlanOp& op, ValueBuffers& buffers,
                          WeightStore& weights, float* scratch);

}  // namespace splitscope
