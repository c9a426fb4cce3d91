#pragma once
/// \file
/// The one check every command that writes files goes through before it
/// starts its work: no output may replace a file the command reads, a
/// shipped file of the zoo (models/), or another output of the same command,
/// however the paths are spelled (util/output_files.hpp).

#include <string>
#include <vector>

#include "util/output_files.hpp"

namespace splitscope::cli {

/// Whether an output may replace a file of the zoo: only `calibrate --force`
/// (a preset re-measured on purpose); calibrate's message says so.
enum class ZooFiles { kKept, kKeptWithoutForce, kReplaceable };

/// InputError (exit 2) naming the option and both paths when an output would
/// destroy an input (`inputs`: files the command reads, as input_file()
/// gives them), a file of the zoo, or another output.
void check_command_outputs(const std::vector<OutputFile>& outputs, const std::vector<std::string>& inputs,
                           ZooFiles zoo = ZooFiles::kKept);

}  // namespace splitscope::cli
