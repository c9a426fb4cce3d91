// The cuda backend has a kernel for every op kind, or declares the kind
// unsupported here (host-side: the plan compiler's table, no GPU needed).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "exec/cuda/plan_compiler.hpp"
#include "ir/ops/op_def.hpp"

namespace splitscope {
namespace kernel_table_test {
namespace {

/// The kinds the cuda backend declares it does not run (inputs are provided, not computed).
const std::set<OpKind> kDeclaredUnsupported{OpKind::kInput};

TEST(CudaKernelTable, EveryKindHasAKernelOrIsDeclaredUnsupported) {
  for (const OpDef* def : op_defs()) {
    SCOPED_TRACE(std::string(def->name));
    EXPECT_EQ(gpu::has_cuda_kernel(def->kind), kDeclaredUnsupported.count(def->kind) == 0);
  }
}

}  // namespace
}  // namespace kernel_table_test
}  // namespace splitscope
