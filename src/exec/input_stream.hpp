#pragma once
/// \file
/// A measured stream of steps behind an input pipeline (input_pipeline.hpp):
/// real threads on this host. A preparer thread spends the given cost per
/// sample writing each batch into a host buffer (one per batch in flight),
/// a copier thread copies it into a buffer per device that reads network
/// inputs (on the cpu backend a device's memory is this host's, so the copy
/// is a memcpy; the plan itself reads the seeded inputs it was set up with,
/// which are the same values every step), and the calling thread runs one
/// step of the plan per batch, as soon as its batch is copied. The rules of
/// input_pipeline.hpp decide when each may start; the times recorded are the
/// ones that happened, so contention between the three (on a 2-core host,
/// the preparer competes with the plan's own threads) shows in them.

#include "exec/executor.hpp"

namespace splitscope {

/// Runs `plan` on `executor` (Executor::prepare(), or run() per step where
/// it keeps nothing) as Executor::run_input_stream() describes.
RunResult run_measured_input_stream(Executor& executor, const Plan& plan, const RunOptions& options,
                                    const InputPipelineOptions& input);

}  // namespace splitscope
