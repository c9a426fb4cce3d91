#pragma once
/// \file
/// What a `--backend cpu` run of a plan holds in memory, counted before it
/// allocates anything, and the check that it fits in the memory available
/// now, less a margin (docs/limits.md, "Memory of a cpu run"). Counting the
/// plan's values alone undercounted training by a fifth, and comparing with
/// the machine's total memory let runs through that the kernel then killed
/// (issue 54, item 10).

#include <cstdint>
#include <string>

#include "plan/plan.hpp"

namespace splitscope {

/// Bytes a cpu run of a plan holds, by what holds them.
struct CpuRunMemory {
  int64_t activations = 0;      ///< activation values: inputs, outputs, the stash each backward reads
  int64_t weights = 0;          ///< parameter values (each device's slices)
  int64_t gradients = 0;        ///< gradient values (training)
  int64_t optimizer_state = 0;  ///< momentum, Adam's moments: state_per_param() floats a weight
  int64_t workspace = 0;        ///< per device, the largest kernel scratch (im2col columns, cell gates)
  int64_t output = 0;           ///< the network output, assembled once a run
  int64_t threads = 0;          ///< per thread: its stack and BLAS buffer (kThreadBytes each)

  int64_t total() const;
  /// The memory of two runs held at once.
  CpuRunMemory& operator+=(const CpuRunMemory& other);
  /// The part that grows with the batch (activations, workspace, output).
  int64_t per_batch() const { return activations + workspace + output; }
};

/// What one thread of a run holds besides the plan's tensors: its stack and
/// OpenBLAS's per-thread buffer, as far as the kernels touch them (measured:
/// docs/limits.md).
inline constexpr int64_t kThreadBytes = int64_t{16} << 20;

/// The memory a cpu run of `plan` holds on `threads` threads (compute and
/// copy threads together).
CpuRunMemory cpu_run_memory(const Plan& plan, int threads);

/// The memory kept free besides a run: the larger of 512 MiB and 1/16 of the
/// machine's memory, for the process itself, the system and other programs
/// whose memory grows while the run allocates.
int64_t memory_margin_bytes(int64_t total_bytes);

/// InputError (exit 2, naming --backend cpu) when `memory` is more than
/// `available_bytes` less memory_margin_bytes(`total_bytes`): the message
/// gives each part, what is available, and the largest batch that fits
/// (`batch`: the plan's). Nothing is checked when `available_bytes` is 0
/// (unknown).
void check_memory_fits(const CpuRunMemory& memory, int64_t available_bytes, int64_t total_bytes, int64_t batch);

}  // namespace splitscope
