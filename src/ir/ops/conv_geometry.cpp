#include "ir/ops/conv_geometry.hpp"

namespace splitscope {

ConvGeometry conv_geometry(const OpAttrs& attrs, const Shape& input, int64_t filters) {
  ConvGeometry g;
  g.in_channels = input.at(0);
  g.in_h = input.at(1);
  g.in_w = input.at(2);
  g.filters = filters;
  g.groups = attrs.groups;
  g.kernel_h = attrs.kernel.h;
  g.kernel_w = attrs.kernel.w;
  g.stride_h = attrs.stride.h;
  g.stride_w = attrs.stride.w;
  g.pad_h = attrs.padding.h;
  g.pad_w = attrs.padding.w;
  return g;
}

ConvGeometry conv_geometry(const OpNode& conv) {
  return conv_geometry(conv.attrs, conv.input_shapes.at(0), conv.output_shapes.at(0).at(0));
}

ConvGeometry pool_geometry(const OpAttrs& attrs, const Shape& input, int64_t channels) {
  ConvGeometry g = conv_geometry(attrs, Shape{channels, input.at(1), input.at(2)}, channels);
  g.groups = 1;
  return g;
}

ConvGeometry pool_geometry(const OpNode& pool, int64_t channels) {
  return pool_geometry(pool.attrs, pool.input_shapes.at(0), channels);
}

}  // namespace splitscope
