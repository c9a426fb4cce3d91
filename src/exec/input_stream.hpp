#pragma once
/// \file
/// A measured stream of steps behind an input pipeline (input_pipeline.hpp):
/// real threads on this host. A preparer thread spends the given cost per
/// sample writing each batch into a host buffer (one per batch in flight),
/// a copier thread copies it into a buffer per device that reads network
/// inputs (InputStaging: on the cpu backend a memcpy, on cuda a copy from
/// pinned memory on a stream of its own; the plan itself reads the seeded
/// inputs it was set up with, which are the same values every step, so the
/// copy is there for its time), and the calling thread runs one
/// step of the plan per batch, as soon as its batch is copied. The rules of
/// input_pipeline.hpp decide when each may start; the times recorded are the
/// ones that happened, so contention between the three (on a 2-core host,
/// the preparer competes with the plan's own threads) shows in them.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "exec/executor.hpp"
#include "exec/input_pipeline.hpp"

namespace splitscope {

/// Where batches wait on the host, and the copy that moves one to a device
/// reading network inputs: each backend's own (host_input_staging() on the
/// cpu backend; pinned buffers and a copy stream on cuda).
class InputStaging {
 public:
  virtual ~InputStaging() = default;
  /// The host buffer of batch slot `slot`, for the preparer to write.
  virtual float* host_batch(size_t slot) = 0;
  /// Copies the first `bytes` of slot `slot` to target `target`'s device
  /// buffer; returns once they have landed.
  virtual void copy(size_t slot, size_t target, int64_t bytes) = 0;
};

/// Makes the staging of `slots` batches of `batch_bytes` for `targets` (one
/// per device that reads network inputs, network_input_copies()).
using InputStagingFactory = std::function<std::unique_ptr<InputStaging>(
    const std::vector<InputCopy>& targets, size_t slots, int64_t batch_bytes)>;

/// The cpu backend's: a device's memory is this host's, so the batches wait
/// in plain host buffers and a copy is a memcpy into a buffer per target.
std::unique_ptr<InputStaging> host_input_staging(const std::vector<InputCopy>& targets, size_t slots,
                                                 int64_t batch_bytes);

/// Runs `plan` on `executor` (Executor::prepare(), or run() per step where
/// it keeps nothing) as InputStreamRuntime describes (mode_runtimes.hpp), its batches
/// staged by what `make_staging` makes.
RunResult run_measured_input_stream(Executor& executor, const Plan& plan, const RunOptions& options,
                                    const InputPipelineOptions& input,
                                    const InputStagingFactory& make_staging = host_input_staging);

}  // namespace splitscope
