// The cpu backend has a kernel for every op kind, or declares the kind
// unsupported here; an unsupported op is refused before a run (exit 3).
#include <gtest/gtest.h>

#include <set>

#include "exec/cpu/compute_task.hpp"
#include "exec/cpu/cpu_executor.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/ops/op_def.hpp"
#include "partitioners/partitioner.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace kernel_table_test {
namespace {

/// The kinds the cpu backend declares it does not run (inputs are provided, not computed).
const std::set<OpKind> kDeclaredUnsupported{OpKind::kInput};

TEST(CpuKernelTable, EveryKindHasAKernelOrIsDeclaredUnsupported) {
  for (const OpDef* def : op_defs()) {
    SCOPED_TRACE(std::string(def->name));
    EXPECT_EQ(has_cpu_kernel(def->kind), kDeclaredUnsupported.count(def->kind) == 0);
  }
}

TEST(CpuKernelTable, AnOpWithoutAKernelIsRefusedBeforeTheRunNamingIt) {
  auto graph = std::make_shared<const Graph>(lower(parse_model_text(
      R"({"name": "tiny", "batch": 2, "input": [4], "layers": [{"type": "dense", "units": 3}]})", "t")));
  Plan plan = make_partitioner("single")->partition(graph, PartitionOptions{});
  // Make the dense op claim to compute the network input, a kind with no kernel.
  for (PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCompute) op.node = 0;
  }
  CpuExecutor executor;
  try {
    executor.run(plan, RunOptions{});
    FAIL() << "the run was not refused";
  } catch (const UnavailableError& error) {
    EXPECT_NE(std::string(error.what()).find("the cpu backend has no kernel for input ops"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("op 'input"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace kernel_table_test
}  // namespace splitscope
