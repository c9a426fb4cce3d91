#pragma once
/// \file
/// How many threads a CPU run uses, from `--inter-op-threads` and
/// `--intra-op-threads` (the two knobs of TensorFlow's and PyTorch's CPU
/// runtimes) and the machine.
///
/// - inter-op threads: how many ops may run at the same time. Each is a
///   compute worker serving whole devices (device d goes to worker
///   d mod inter-op); default one per device, so every device computes
///   concurrently. Fewer than the devices makes devices take turns on a
///   worker; more is capped at the devices, since a device runs its ops in its
///   schedule's order, one at a time.
/// - intra-op threads: how many threads one op's kernel is spread over (the
///   matrix products split by columns or rows, im2col by rows), the worker
///   included; default max(1, hardware threads / inter-op threads), so the
///   compute workers together fill the machine without oversubscribing it.
/// Transfers and collectives run besides, on one copy thread per device.

#include <string>

#include "exec/executor.hpp"

namespace splitscope {

struct ThreadConfig {
  int inter_op = 1;
  int intra_op = 1;
  int hardware_threads = 1;
  bool inter_op_capped = false;  ///< more inter-op threads were asked for than there are devices
};

/// Resolves the options for a plan on `devices` devices and a machine with
/// `hardware_threads` threads. Throws InputError for a negative count.
ThreadConfig resolve_threads(const RunOptions& options, int devices, int hardware_threads);

/// "2 (one per device)", "1 (capped at the 1 device)": how the inter-op count came about.
std::string describe_inter_op(const ThreadConfig& config, const RunOptions& options);

}  // namespace splitscope
