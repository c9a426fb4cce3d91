#include <fmt/format.h>

#include "exec/executor.hpp"
#include "util/errors.hpp"

namespace splitscope {

void require_supported(const Executor& executor, const Plan& plan) {
  for (const PlanOp& op : plan.ops) {
    const std::string why = executor.unsupported(plan, op);
    if (why.empty()) continue;
    throw UnavailableError(fmt::format("op '{}' ({} of {}): {}; run it on another backend (--backend sim "
                                       "predicts every op)",
                                       op_label(plan, op), to_string(plan.graph->node(op.node).kind),
                                       plan.graph->name(), why));
  }
}

}  // namespace splitscope
