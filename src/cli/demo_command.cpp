// Placeholder until its issue lands: the subcommand exists, says so, and fails.

#include "cli/command.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {

Command add_demo_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("demo", "Demos (rnn: the pipelined-RNN wavefront) (not built yet)");
  sub->allow_extras();
  return {sub, [](const std::vector<std::string>&) -> int { throw RunError("'demo' is not implemented in this build yet"); }};
}

}  // namespace splitscope::cli
