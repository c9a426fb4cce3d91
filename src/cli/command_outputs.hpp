#pragma once
/// \file
/// The one check every command that writes files goes through before it
/// starts its work: no output may replace a file the command reads, a
/// shipped file of the zoo (models/), or another output of the same command,
/// however the paths are spelled (util/output_files.hpp).

#include <string>
#include <vector>

#include "util/output_batch.hpp"
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

/// Publishes `files` and says on stderr what was written ("wrote r.json
/// (--report)"), as calibrate does: a user who asked for a file sees where
/// it went. Stderr, so that stdout stays the table or the --json document;
/// nothing with `quiet` (--quiet: scripts, and sweep's own points).
void publish_outputs(OutputBatch& files, bool quiet);

}  // namespace splitscope::cli
