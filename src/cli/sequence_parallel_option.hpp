#pragma once
/// \file
/// `--sequence-parallel` (`run`, `plan`, `compare`): Megatron-LM's sequence
/// parallelism for `--strategy tensor` and `hybrid` on a transformer
/// (partitioners/head_split.hpp, docs/commands.md). The partitioners refuse
/// it where it does not apply (PartitionOptions::sequence_parallel).

#include <CLI/CLI.hpp>

namespace splitscope::cli {

/// Registers --sequence-parallel on `command`, into `given`.
CLI::Option* add_sequence_parallel_option(CLI::App& command, bool& given);

}  // namespace splitscope::cli
