#pragma once
/// \file
/// Checks of the command line's words that CLI11 does not make, each
/// answering with the problem to print (exit 2) or nullopt:
/// - an option its command does not have, with the nearest real one
///   (`run --device 2` would otherwise meet only "--devices is required");
/// - a comma list with an empty item (`--bytes 1K,,1M`, `--straggler 1:5,`),
///   which CLI11's splitting would drop without a word.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace splitscope::cli {

/// "unknown option --device for run (did you mean --devices?)" for the
/// first option-like word that the subcommand it follows (found by name
/// from `top`) does not have. Stops at `--`, and at a prefix command
/// (sweep's run line is run's to judge).
std::optional<std::string> unknown_option_problem(CLI::App& top, int argc, char** argv);

/// "--bytes: '1K,,1M' has an empty item; ..." for the first value of an
/// option split at commas (CLI11's delimiter) that is empty, or begins,
/// ends or doubles a comma.
std::optional<std::string> empty_list_item_problem(CLI::App& top, int argc, char** argv);

}  // namespace splitscope::cli
