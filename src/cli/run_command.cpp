// Placeholder until its issue lands: the subcommand exists, says so, and fails.

#include "cli/command.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {

Command add_run_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("run", "Run (or simulate) one strategy and report its timeline (not built yet)");
  sub->allow_extras();
  return {sub, [] () -> int { throw RunError("'run' is not implemented in this build yet"); }};
}

}  // namespace splitscope::cli
