#include "ir/op.hpp"

#include "ir/ops/op_def.hpp"

namespace splitscope {

std::string_view to_string(OpKind kind) {
  const size_t index = static_cast<size_t>(kind);
  return index < kOpKindCount ? op_def(kind).name : std::string_view("?");
}

bool is_weighted(OpKind kind) { return op_def(kind).weighted; }
bool is_channel_local(OpKind kind) { return op_def(kind).channel_local; }
bool is_cell(OpKind kind) { return op_def(kind).cell; }

}  // namespace splitscope
