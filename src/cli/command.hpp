#pragma once
/// \file
/// Subcommands of `splitscope`. Each lives in its own file, registers its
/// options on the app, and returns what to run once the command line is parsed.

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace splitscope::cli {

/// Runs a parsed subcommand, given the whole command line (for report
/// context); returns the exit code. Errors are thrown (util/errors.hpp) and
/// turned into messages and exit codes by main.
using Action = std::function<int(const std::vector<std::string>& command_line)>;

struct Command {
  CLI::App* app = nullptr;
  Action action;
};

Command add_inspect_command(CLI::App& app);
Command add_plan_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_calibrate_command(CLI::App& app);
Command add_demo_command(CLI::App& app);
Command add_validate_command(CLI::App& app);
Command add_collective_command(CLI::App& app);
Command add_ensemble_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
Command add_lessons_command(CLI::App& app);
Command add_prices_command(CLI::App& app);
Command add_report_command(CLI::App& app);
Command add_search_command(CLI::App& app);

}  // namespace splitscope::cli
