#pragma once
/// \file
/// `--precision fp32|tf32|bf16|fp16|amp` (`run`, `compare`, `plan`, and
/// `sweep` through `run`): what a plan stores its tensors in and what math
/// its products run on (ir/precision.hpp, docs/precision.md). The plan
/// carries the storage (PartitionOptions::precision); the simulated machine
/// prices the products at the precision's peak (machine_at_precision); the
/// backends that run plans refuse what they cannot run, before any work.

#include <CLI/CLI.hpp>
#include <string>

#include "ir/precision.hpp"
#include "run/backend.hpp"
#include "sim/machine/machine.hpp"

namespace splitscope::cli {

/// Registers `--precision` on `command`, into `precision` (left empty when not given).
void add_precision_option(CLI::App& command, std::string& precision);

/// The precision `text` names; fp32 when empty (not given). InputError (exit 2) otherwise.
Precision precision_option(const std::string& text);

/// `machine` with its products priced at the peak of `precision`'s math
/// (`matrix_math` set to it). InputError (exit 2) naming
/// `device.peak_tflops.<math>` where the file gives no such peak, and where
/// the file prices ops from a calibration table measured at other math or
/// storage (its times do not hold at this precision).
Machine machine_at_precision(Machine machine, Precision precision);

/// UnavailableError (exit 3) where `backend` cannot run plans at
/// `precision`: cpu runs fp32, bf16, fp16 and amp (float32 math, storage
/// rounded), not tf32; cuda runs fp32 and tf32 (float32 storage:
/// `--dtype tf32`). The message names `--backend sim`.
void require_precision_backend(Backend backend, Precision precision);

}  // namespace splitscope::cli
