// Placeholder until its issue lands: the subcommand exists, says so, and fails.

#include "cli/command.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {

Command add_plan_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("plan", "Partition a network and show what runs where (not built yet)");
  sub->allow_extras();
  return {sub, [] () -> int { throw RunError("'plan' is not implemented in this build yet"); }};
}

}  // namespace splitscope::cli
