// splitscope: partition a network over devices, run or simulate it, and
// report compute against transfer time.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/run_cli.hpp"
#include "cli/command_line_words.hpp"
#include "git_revision.h"
#include "splitscope_config.h"
#include "util/errors.hpp"

namespace {

/// The command argv names, or "" where it names none. The top level has no
/// option that takes a value, so the first word that is not an option is the
/// command: checked before CLI11 parses, which would otherwise answer
/// `splitscope validate --help` with the top-level help and exit 0.
std::string named_command(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") return i + 1 < argc ? argv[i + 1] : "";
    if (!word.empty() && word.front() != '-') return word;
  }
  return "";
}

int run_main(int argc, char** argv) {
  using namespace splitscope;
  CLI::App app{"splitscope: model-parallelism simulator and profiler.\n"
               "Partitions a network over devices, runs it (cpu threads, CUDA streams) or\n"
               "simulates it on a described machine, and reports compute against transfer time."};
  app.set_version_flag("--version", std::string("splitscope ") + SPLITSCOPE_VERSION + " (" +
                                        SPLITSCOPE_GIT_REVISION + ", " + SPLITSCOPE_BUILD_TYPE +
                                        (SPLITSCOPE_HAVE_CUDA ? ", cuda" : ", no cuda") +
                                        (SPLITSCOPE_HAVE_MPI ? ", mpi" : ", no mpi") + ")");
  app.require_subcommand(1);
  app.fallthrough();

  std::vector<cli::Command> commands{
      cli::add_inspect_command(app), cli::add_plan_command(app),      cli::add_run_command(app),
      cli::add_compare_command(app), cli::add_calibrate_command(app), cli::add_demo_command(app),
      cli::add_validate_command(app),    cli::add_collective_command(app), cli::add_ensemble_command(app),
      cli::add_sweep_command(app),     cli::add_lessons_command(app),   cli::add_prices_command(app),
      cli::add_report_command(app),      cli::add_search_command(app),
  };

  if (const std::string name = named_command(argc, argv); !name.empty()) {
    const bool known = std::any_of(commands.begin(), commands.end(),
                                   [&](const cli::Command& command) { return command.app->get_name() == name; });
    if (!known) {
      std::string names;
      for (const auto& command : commands) names += (names.empty() ? "" : ", ") + command.app->get_name();
      throw cli::CommandLineError(
          fmt::format("unknown command '{}'; the commands are {} (run 'splitscope --help')", name, names));
    }
  }

  if (const std::optional<int> exit_code = cli::parse_command_line(app, argc, argv)) return *exit_code;

  const std::vector<std::string> command_line(argv, argv + argc);
  for (auto& command : commands) {
    if (command.app->parsed()) return command.action(command_line);
  }
  throw cli::CommandLineError("command line: no command given; run 'splitscope --help'");
}

}  // namespace

namespace {

// A table piped into a full disk must not end in exit 0.
int check_standard_output(int status) {
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (failed && status == 0) {
    fmt::print(stderr, "error: writing to standard output failed: {}\n", std::strerror(errno));
    return splitscope::kExitFailure;
  }
  return status;
}

}  // namespace

int splitscope::cli::run_command_line(int argc, char** argv) { return run_main(argc, argv); }

std::optional<int> splitscope::cli::parse_command_line(CLI::App& app, int argc, char** argv) {
  // Before CLI11, whose splitting at commas would drop an empty item unseen.
  if (const std::optional<std::string> problem = empty_list_item_problem(app, argc, argv)) {
    throw CommandLineError("command line: " + *problem);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A mistyped option first: CLI11 would name only what it then misses ("--devices is required").
    const std::optional<std::string> unknown = unknown_option_problem(app, argc, argv);
    throw CommandLineError("command line: " + (unknown ? *unknown : std::string(e.what())) +
                           "\nRun 'splitscope --help' (or 'splitscope COMMAND --help').");
  }
  return std::nullopt;
}

splitscope::cli::CommandFailure splitscope::cli::current_command_failure() {
  using namespace splitscope;
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return {kExitFailure,
            "out of memory: this command needs more memory than the machine has; use a smaller --batch, "
            "--microbatches or network (run, compare and demo predict large ones with --backend sim)"};
  } catch (const CommandLineError& e) {
    return {kExitBadInput, e.what()};
  } catch (const InputError& e) {
    return {kExitBadInput, e.what()};
  } catch (const UnavailableError& e) {
    return {kExitUnavailable, e.what()};
  } catch (const std::exception& e) {
    return {kExitFailure, e.what()};
  }
}

int splitscope::cli::run_cli(int argc, char** argv) {
  try {
    return check_standard_output(run_main(argc, argv));
  } catch (const std::exception&) {
    const CommandFailure failure = current_command_failure();
    fmt::print(stderr, "error: {}\n", failure.message);
    return failure.exit_code;
  }
}
