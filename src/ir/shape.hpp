#pragma once
/// \file
/// Per-sample tensor shapes: `[features]`, `[channels, height, width]` or
/// `[steps, features]`. The batch is kept apart (Model::batch), because every
/// partitioner slices along it or along axis 0 of these shapes, never both in
/// one index space.

#include <cstdint>
#include <string>
#include <vector>

namespace splitscope {

using Shape = std::vector<int64_t>;

/// Number of elements in one sample of this shape (1 for an empty shape),
/// saturating at INT64_MAX rather than wrapping.
int64_t element_count(const Shape& shape);

/// Elements per unit of axis 0 (the product of the remaining axes).
int64_t inner_count(const Shape& shape);

/// "[3, 224, 224]"
std::string to_string(const Shape& shape);

}  // namespace splitscope
