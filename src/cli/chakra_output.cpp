#include "cli/chakra_output.hpp"

#include <fmt/format.h>

#include <iostream>

#include "sim/engine/simulator.hpp"
#include "splitscope_config.h"
#include "util/errors.hpp"
#if SPLITSCOPE_HAVE_CHAKRA
#include "chakra/chakra_trace.hpp"
#endif

namespace splitscope::cli {

void write_plan_chakra(const Plan& plan, const Machine& machine, const std::string& dir) {
#if SPLITSCOPE_HAVE_CHAKRA
  const Timeline predicted = simulate(plan, machine);
  const auto written = write_chakra_traces(chakra_traces(plan, predicted), dir, "splitscope");
  std::cerr << fmt::format("wrote {} Chakra trace file(s) to {}\n", written.size(), dir);
#else
  (void)plan;
  (void)machine;
  (void)dir;
  throw UnavailableError(
      "--chakra: this build has no Protocol Buffers; install Debian's libprotobuf-dev and protobuf-compiler "
      "(scripts/setup does) and rebuild");
#endif
}

}  // namespace splitscope::cli
