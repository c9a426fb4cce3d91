#include "ir/ops/layer_rules.hpp"

namespace splitscope::layer_rules {

int64_t window_output(int64_t size, int64_t kernel, int64_t stride, int64_t padding) {
  return (size + 2 * padding - kernel) / stride + 1;
}

void check_kernel_fits(const NetworkFields& fields, const Layer& layer, Extent2 padding) {
  const Shape& in = layer.input_shape;
  const Extent2 kernel = layer.attrs.kernel;
  if (kernel.h > in[1] + 2 * padding.h || kernel.w > in[2] + 2 * padding.w) {
    fields.fail("kernel", "kernel " + std::to_string(kernel.h) + "x" + std::to_string(kernel.w) +
                              " is larger than the " + (padding.h || padding.w ? "padded " : "") + "input " +
                              std::to_string(in[1] + 2 * padding.h) + "x" + std::to_string(in[2] + 2 * padding.w));
  }
}

void require_image(const NetworkFields& fields, const Layer& layer) {
  if (layer.input_shape.size() != 3) {
    fields.fail("", std::string(layer_type(layer.kind)) + " needs an image input [channels, height, width], but gets " +
                        to_string(layer.input_shape));
  }
}

void read_pool(const NetworkFields& fields, Layer& layer) {
  OpAttrs& a = layer.attrs;
  fields.required("kernel", "the window size, an int or [h, w]");
  a.kernel = fields.extent("kernel", {0, 0}, 1);
  a.stride = fields.extent("stride", a.kernel, 1);
  a.padding = fields.extent("padding", {0, 0}, 0);
  // At most half a window of padding, as in cuDNN and PyTorch: every
  // window then holds at least one real element, so a max is never -inf
  // and an average (over the real elements only) never divides by zero.
  if (2 * a.padding.h > a.kernel.h || 2 * a.padding.w > a.kernel.w) {
    fields.fail("padding", "padding " + std::to_string(a.padding.h) + "x" + std::to_string(a.padding.w) +
                               " is more than half the " + std::to_string(a.kernel.h) + "x" +
                               std::to_string(a.kernel.w) + " window; use at most kernel / 2");
  }
  require_image(fields, layer);
  check_kernel_fits(fields, layer, a.padding);
  const Shape& in = layer.input_shape;
  layer.output_shape = {in[0], window_output(in[1], a.kernel.h, a.stride.h, a.padding.h),
                        window_output(in[2], a.kernel.w, a.stride.w, a.padding.w)};
}

void keep_shape(const NetworkFields&, Layer& layer) { layer.output_shape = layer.input_shape; }

LayerDef shape_keeping(std::string_view name) {
  LayerDef def;
  def.name = name;
  def.read = keep_shape;
  return def;
}

}  // namespace splitscope::layer_rules
