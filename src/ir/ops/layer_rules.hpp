#pragma once
/// \file
/// Rules several layer types share (ops/*.cpp only, layer_def.hpp): the
/// window arithmetic of convolutions and pooling, the input checks of image
/// and sequence layers, and the definition of a layer that keeps its input's
/// shape and counts nothing.

#include <cstdint>
#include <string>
#include <vector>

#include "ir/layer.hpp"
#include "ir/network_fields.hpp"
#include "ir/ops/layer_def.hpp"

namespace splitscope::layer_rules {

/// Size of one image axis after a window of `kernel` with `stride` and `padding`.
int64_t window_output(int64_t size, int64_t kernel, int64_t stride, int64_t padding);
/// Fails unless the (padded) input holds one window of layer.attrs.kernel.
void check_kernel_fits(const NetworkFields& fields, const Layer& layer, Extent2 padding);
/// Fails unless the input is an image [channels, height, width].
void require_image(const NetworkFields& fields, const Layer& layer);
/// A pooling layer (maxpool, avgpool): its window's kernel, stride (the
/// kernel's by default) and padding (at most half the window), on an image
/// the window fits; the output keeps the channels.
void read_pool(const NetworkFields& fields, Layer& layer);
/// The output is the input's shape (activations, normalizations, dropout).
void keep_shape(const NetworkFields& fields, Layer& layer);
/// A layer type with no fields of its own that keeps its input's shape and
/// counts no parameters or FLOPs (relu, tanh, sigmoid, gelu).
LayerDef shape_keeping(std::string_view name);

}  // namespace splitscope::layer_rules
