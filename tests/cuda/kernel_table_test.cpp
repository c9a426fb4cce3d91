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
// The transformer's kinds have no cuda kernels yet: a plan with one is refused (exit 3) naming the op.
const std::set<OpKind> kDeclaredUnsupported{OpKind::kInput,     OpKind::kGelu,      OpKind::kGeluGrad,
                                            OpKind::kEmbedding, OpKind::kEmbeddingGradWeight,
                                            OpKind::kAttention, OpKind::kAttentionGrad, OpKind::kLinear,
                                            OpKind::kLinearGradInput, OpKind::kLinearGradWeight};

TEST(CudaKernelTable, EveryKindHasAKernelOrIsDeclaredUnsupported) {
  for (const OpDef* def : op_defs()) {
    SCOPED_TRACE(std::string(def->name));
    EXPECT_EQ(gpu::has_cuda_kernel(def->kind), kDeclaredUnsupported.count(def->kind) == 0);
  }
}

}  // namespace
}  // namespace kernel_table_test
}  // namespace splitscope
