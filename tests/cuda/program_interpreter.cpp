#include "program_interpreter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <type_traits>

#include "exec/cpu/kernels/activation.hpp"
#include "exec/cpu/kernels/dropout.hpp"
#include "exec/cpu/kernels/normalization.hpp"
#include "exec/cpu/kernels/optimizer_step.hpp"
#include "exec/cpu/kernels/pooling_backward.hpp"
#include "exec/cuda/program_data.hpp"
#include "ir/params.hpp"

namespace splitscope::testing {
namespace {

using namespace gpu;

/// Elements a [rows][width] block spans at `stride`.
int64_t extent(int64_t rows, int64_t width, int64_t stride) { return rows == 0 ? 0 : (rows - 1) * stride + width; }

class Machine {
 public:
  Machine(const Plan& plan, const DeviceProgram& program, uint64_t seed) : plan_(plan), program_(program) {
    memory_.resize(program.buffers.size());
    for (size_t b = 0; b < program.buffers.size(); ++b) {
      const BufferSpec& spec = program.buffers[b];
      std::vector<float>& data = memory_[b];
      if (spec.kind == BufferKind::kWeight) {
        data = materialise(*spec.weight, seed);
      } else if (spec.kind == BufferKind::kValue && plan.value(spec.value).producer < 0) {
        const Value& value = plan.value(spec.value);
        if (plan.graph->node(value.node).kind == OpKind::kInput) {
          data = network_input(plan, value, seed);
        } else {
          data.resize(static_cast<size_t>(spec.elements));
          for (size_t i = 0; i < data.size(); ++i) data[i] = input_value(seed, static_cast<int64_t>(i));
        }
      } else if (spec.kind == BufferKind::kState) {
        data.assign(static_cast<size_t>(spec.elements), 0.0f);  // an optimizer's state starts at zero
      } else {
        data.assign(static_cast<size_t>(spec.elements), std::numeric_limits<float>::quiet_NaN());
      }
      if (static_cast<int64_t>(data.size()) != spec.elements) throw std::logic_error("buffer filled with the wrong size");
    }
  }

  void run(int index) {
    step_ = index;
    const Step& step = program_.steps[static_cast<size_t>(index)];
    device_ = step.stream.device;
    std::visit([&](const auto& action) { execute(action, step); }, step.action);
  }

  const std::vector<float>& buffer(int id) const { return memory_.at(static_cast<size_t>(id)); }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::logic_error(fmt::format("step {}: {}", step_, what));
  }

  /// The `count` elements from `ref`, checked to lie inside the buffer (and,
  /// for non-copy steps, on the step's device).
  float* at(const Ref& ref, int64_t count, bool own_device = true) {
    if (ref.buffer < 0 || ref.buffer >= static_cast<int>(memory_.size())) fail("invalid buffer");
    std::vector<float>& data = memory_[static_cast<size_t>(ref.buffer)];
    if (ref.offset < 0 || ref.offset + count > static_cast<int64_t>(data.size())) {
      fail(fmt::format("access [{}, {}) outside buffer {} ({}) of {} elements", ref.offset, ref.offset + count,
                       ref.buffer, program_.buffers[static_cast<size_t>(ref.buffer)].label, data.size()));
    }
    if (own_device && program_.buffers[static_cast<size_t>(ref.buffer)].device != device_) {
      fail(fmt::format("touches buffer {} ({}) of device {} from device {}", ref.buffer,
                       program_.buffers[static_cast<size_t>(ref.buffer)].label,
                       program_.buffers[static_cast<size_t>(ref.buffer)].device, device_));
    }
    return data.data() + ref.offset;
  }

  void execute(const MatMulStep& m, const Step&) {
    const float* x = m.transpose_x ? at(m.x, extent(m.inner, m.rows, m.x_stride)) : at(m.x, extent(m.rows, m.inner, m.x_stride));
    const float* w = m.transpose_w ? at(m.w, extent(m.cols, m.inner, m.w_stride)) : at(m.w, extent(m.inner, m.cols, m.w_stride));
    float* y = at(m.y, extent(m.rows, m.cols, m.y_stride));
    auto x_at = [&](int64_t r, int64_t k) { return m.transpose_x ? x[k * m.x_stride + r] : x[r * m.x_stride + k]; };
    auto w_at = [&](int64_t k, int64_t c) { return m.transpose_w ? w[c * m.w_stride + k] : w[k * m.w_stride + c]; };
    for (int64_t r = 0; r < m.rows; ++r) {
      for (int64_t c = 0; c < m.cols; ++c) {
        double sum = m.accumulate ? y[r * m.y_stride + c] : 0.0;
        for (int64_t k = 0; k < m.inner; ++k) sum += double(x_at(r, k)) * w_at(k, c);
        y[r * m.y_stride + c] = static_cast<float>(sum);
      }
    }
  }

  /// Every (sample, filter, output position, input channel, kernel tap) of a
  /// convolution step that touches a real input element, as flat indices into
  /// x, filter and y: the three passes are the same sum read three ways.
  template <typename Visit>
  static void each_tap(const ConvStep& s, Visit visit) {
    const ConvGeometry& g = s.geometry;
    const int64_t plane = g.in_h * g.in_w;
    const int64_t per_group = g.in_channels / g.groups;
    const int64_t filters_per_group = g.filters / g.groups;
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t f = 0; f < g.filters; ++f) {
        const int64_t group = f / filters_per_group;
        for (int64_t oy = 0; oy < g.out_h(); ++oy) {
          for (int64_t ox = 0; ox < g.out_w(); ++ox) {
            const int64_t y_at = n * s.y_sample_stride + (f * g.out_h() + oy) * g.out_w() + ox;
            for (int64_t c = 0; c < per_group; ++c) {
              for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
                for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
                  const int64_t iy = oy * g.stride_h - g.pad_h + ky;
                  const int64_t ix = ox * g.stride_w - g.pad_w + kx;
                  if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
                  visit(n * s.x_sample_stride + (group * per_group + c) * plane + iy * g.in_w + ix,
                        ((f * per_group + c) * g.kernel_h + ky) * g.kernel_w + kx, y_at);
                }
              }
            }
          }
        }
      }
    }
  }

  void execute(const ConvStep& s, const Step&) {
    const ConvGeometry& g = s.geometry;
    const int64_t plane = g.in_h * g.in_w;
    const int64_t per_group = g.in_channels / g.groups;
    const int64_t filters_per_group = g.filters / g.groups;
    if (per_group * g.groups != g.in_channels || filters_per_group * g.groups != g.filters) fail("uneven groups");
    const int64_t x_extent = extent(s.batch, g.in_channels * plane, s.x_sample_stride);
    const int64_t filter_extent = g.filters * per_group * g.kernel_h * g.kernel_w;
    const int64_t y_extent = extent(s.batch, g.filters * g.out_h() * g.out_w(), s.y_sample_stride);
    float* x = at(s.x, x_extent);
    float* k = at(s.filter, filter_extent);
    float* y = at(s.y, y_extent);
    // Sums in double, rounded once, as the forward pass does.
    std::vector<double> sum;
    switch (s.pass) {
      case gpu::ConvPass::kForward:
        sum.assign(static_cast<size_t>(y_extent), 0.0);
        each_tap(s, [&](int64_t xi, int64_t ki, int64_t yi) { sum[static_cast<size_t>(yi)] += double(x[xi]) * k[ki]; });
        for (int64_t n = 0; n < s.batch; ++n) {
          for (int64_t e = 0; e < g.filters * g.out_h() * g.out_w(); ++e) {
            y[n * s.y_sample_stride + e] = static_cast<float>(sum[static_cast<size_t>(n * s.y_sample_stride + e)]);
          }
        }
        return;
      case gpu::ConvPass::kBackwardData:
        sum.assign(static_cast<size_t>(x_extent), 0.0);
        each_tap(s, [&](int64_t xi, int64_t ki, int64_t yi) { sum[static_cast<size_t>(xi)] += double(y[yi]) * k[ki]; });
        for (int64_t n = 0; n < s.batch; ++n) {
          for (int64_t e = 0; e < g.in_channels * plane; ++e) {
            x[n * s.x_sample_stride + e] = static_cast<float>(sum[static_cast<size_t>(n * s.x_sample_stride + e)]);
          }
        }
        return;
      case gpu::ConvPass::kBackwardFilter:
        sum.assign(static_cast<size_t>(filter_extent), 0.0);
        each_tap(s, [&](int64_t xi, int64_t ki, int64_t yi) { sum[static_cast<size_t>(ki)] += double(x[xi]) * y[yi]; });
        for (int64_t i = 0; i < filter_extent; ++i) {
          k[i] = static_cast<float>((s.accumulate ? double(k[i]) : 0.0) + sum[static_cast<size_t>(i)]);
        }
        return;
    }
  }

  void execute(const PoolStep& s, const Step&) {
    const ConvGeometry& g = s.window;
    const int64_t plane = g.in_h * g.in_w;
    const float* x = at(s.x, extent(s.batch, g.in_channels * plane, s.x_sample_stride));
    float* y = at(s.y, extent(s.batch, g.in_channels * g.out_h() * g.out_w(), s.y_sample_stride));
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t c = 0; c < g.in_channels; ++c) {
        for (int64_t oy = 0; oy < g.out_h(); ++oy) {
          for (int64_t ox = 0; ox < g.out_w(); ++ox) {
            float best = -INFINITY;
            double sum = 0;
            int64_t count = 0;
            for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
              for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
                const int64_t iy = oy * g.stride_h - g.pad_h + ky, ix = ox * g.stride_w - g.pad_w + kx;
                if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
                const float v = x[n * s.x_sample_stride + c * plane + iy * g.in_w + ix];
                best = std::max(best, v);
                sum += v;
                ++count;
              }
            }
            y[n * s.y_sample_stride + (c * g.out_h() + oy) * g.out_w() + ox] =
                s.max ? best : static_cast<float>(sum / double(count));
          }
        }
      }
    }
  }

  void execute(const BiasActivationStep& s, const Step&) {
    const int64_t total = s.rows * s.channels * s.inner;
    float* y = at(s.y, total);
    const float* bias = s.bias.valid() ? at(s.bias, s.channels) : nullptr;
    for (int64_t e = 0; e < total; ++e) {
      y[e] = activate(s.activation, y[e] + (bias != nullptr ? bias[(e / s.inner) % s.channels] : 0.0f));
    }
  }

  void execute(const MapStep& s, const Step&) {
    const float* x = at(s.x, extent(s.rows, s.width, s.x_stride));
    float* y = at(s.y, extent(s.rows, s.width, s.y_stride));
    for (int64_t r = 0; r < s.rows; ++r) {
      for (int64_t i = 0; i < s.width; ++i) y[r * s.y_stride + i] = activate(s.activation, x[r * s.x_stride + i]);
    }
  }

  void execute(const SoftmaxStep& s, const Step&) {
    const float* x = at(s.x, extent(s.rows, s.width, s.x_stride));
    float* y = at(s.y, extent(s.rows, s.out_width, s.y_stride));
    if (s.out_begin < 0 || s.out_begin + s.out_width > s.width) fail("softmax columns outside its row");
    for (int64_t r = 0; r < s.rows; ++r) {
      const float* row = x + r * s.x_stride;
      const float top = *std::max_element(row, row + s.width);
      double total = 0;
      for (int64_t i = 0; i < s.width; ++i) total += std::exp(double(row[i] - top));
      for (int64_t j = 0; j < s.out_width; ++j) {
        y[r * s.y_stride + j] = static_cast<float>(std::exp(double(row[s.out_begin + j] - top)) / total);
      }
    }
  }

  void execute(const LstmCellStep& s, const Step&) {
    const float* gates = at(s.gates, s.rows * 4 * s.units);
    const float* bias = s.bias.valid() ? at(s.bias, 4 * s.units) : nullptr;
    const float* c_prev = s.c_prev.valid() ? at(s.c_prev, extent(s.rows, s.units, s.c_prev_stride)) : nullptr;
    float* h = at(s.h_out, s.rows * s.units);
    float* c = at(s.c_out, s.rows * s.units);
    for (int64_t r = 0; r < s.rows; ++r) {
      for (int64_t u = 0; u < s.units; ++u) {
        auto pre = [&](int k) { return gates[r * 4 * s.units + k * s.units + u] + (bias ? bias[k * s.units + u] : 0.0f); };
        const float state = sigmoid(pre(1)) * (c_prev ? c_prev[r * s.c_prev_stride + u] : 0.0f) +
                            sigmoid(pre(0)) * std::tanh(pre(2));
        c[r * s.units + u] = state;
        h[r * s.units + u] = sigmoid(pre(3)) * std::tanh(state);
      }
    }
  }

  void execute(const GruCellStep& s, const Step&) {
    const float* gx = at(s.input_gates, s.rows * 3 * s.units);
    const float* gh = s.hidden_gates.valid() ? at(s.hidden_gates, s.rows * 3 * s.units) : nullptr;
    const float* bias = s.bias.valid() ? at(s.bias, 3 * s.units) : nullptr;
    const float* h_prev = s.h_prev.valid() ? at(s.h_prev, extent(s.rows, s.units, s.h_prev_stride)) : nullptr;
    float* h = at(s.h_out, s.rows * s.units);
    for (int64_t r = 0; r < s.rows; ++r) {
      for (int64_t u = 0; u < s.units; ++u) {
        auto x_part = [&](int k) { return gx[r * 3 * s.units + k * s.units + u] + (bias ? bias[k * s.units + u] : 0.0f); };
        auto h_part = [&](int k) { return gh ? gh[r * 3 * s.units + k * s.units + u] : 0.0f; };
        const float reset = sigmoid(x_part(0) + h_part(0));
        const float update = sigmoid(x_part(1) + h_part(1));
        const float candidate = std::tanh(x_part(2) + reset * h_part(2));
        const float previous = h_prev ? h_prev[r * s.h_prev_stride + u] : 0.0f;
        h[r * s.units + u] = (1 - update) * candidate + update * previous;
      }
    }
  }

  void execute(const SumStep& s, const Step&) {
    float* y = at(s.y, s.elements);
    std::vector<const float*> inputs;
    for (const Ref& input : s.inputs) inputs.push_back(at(input, s.elements));
    for (int64_t e = 0; e < s.elements; ++e) {
      float total = 0;
      for (const float* input : inputs) total += input[e];
      y[e] = total;
    }
  }

  void execute(const CopyStep& s, const Step& step) {
    const int src_device = program_.buffers.at(static_cast<size_t>(s.src.buffer)).device;
    const int dst_device = program_.buffers.at(static_cast<size_t>(s.dst.buffer)).device;
    if (src_device < 0 && dst_device < 0) fail("host-to-host copy");
    const bool issued_by_destination = dst_device == step.stream.device;
    const bool download_by_source = dst_device < 0 && src_device == step.stream.device;
    if (!issued_by_destination && !download_by_source) {
      fail(fmt::format("copy {} -> {} issued on device {}", src_device, dst_device, step.stream.device));
    }
    if (src_device < 0 && step.stream.lane != StreamLane::kCopyIn) fail("host-to-device copy off a copy-in stream");
    if (dst_device < 0 && step.stream.lane != StreamLane::kCopyOut) fail("device-to-host copy off a copy-out stream");
    const float* src = at(s.src, extent(s.height, s.width, s.src_pitch), false);
    float* dst = at(s.dst, extent(s.height, s.width, s.dst_pitch), false);
    for (int64_t r = 0; r < s.height; ++r) {
      std::copy(src + r * s.src_pitch, src + r * s.src_pitch + s.width, dst + r * s.dst_pitch);
    }
  }

  void execute(const LossGradStep& s, const Step&) {
    const float* p = at(s.prediction, extent(s.rows, s.width, s.prediction_stride));
    const float* t = at(s.target, extent(s.rows, s.cross_entropy ? 1 : s.width, s.target_stride));
    float* g = at(s.gradient, s.rows * s.width);
    const auto batch = static_cast<float>(s.batch);
    const float scale = 2.0f / (batch * static_cast<float>(s.width));
    for (int64_t r = 0; r < s.rows; ++r) {
      for (int64_t j = 0; j < s.width; ++j) {
        const float pj = p[r * s.prediction_stride + j];
        g[r * s.width + j] = s.cross_entropy
                                 ? (pj - (j == static_cast<int64_t>(t[r * s.target_stride]) ? 1.0f : 0.0f)) / batch
                                 : scale * (pj - t[r * s.target_stride + j]);
      }
    }
  }

  void execute(const ActivationGradStep& s, const Step&) {
    const float* dy = at(s.dy, extent(s.rows, s.width, s.dy_stride));
    const float* y = s.activation == Activation::kNone ? nullptr : at(s.y, extent(s.rows, s.width, s.y_stride));
    float* dx = at(s.dx, extent(s.rows, s.width, s.dx_stride));
    activation_grad_rows(s.activation, dy, s.dy_stride, y, s.y_stride, dx, s.dx_stride, s.rows, s.width);
  }

  void execute(const BiasGradStep& s, const Step&) {
    const float* dz = at(s.dz, extent(s.rows, s.channels * s.inner, s.dz_stride));
    float* db = at(s.db, s.channels);
    for (int64_t c = 0; c < s.channels; ++c) {
      double total = s.accumulate ? db[c] : 0.0;
      for (int64_t r = 0; r < s.rows; ++r) {
        for (int64_t i = 0; i < s.inner; ++i) total += dz[r * s.dz_stride + c * s.inner + i];
      }
      db[c] = static_cast<float>(total);
    }
  }

  void execute(const PoolGradStep& s, const Step&) {
    const ConvGeometry& g = s.window;
    const int64_t plane = g.in_h * g.in_w;
    PoolArgs args;
    args.rows = s.batch;
    args.window = s.window;
    if (s.max) {
      args.input = at(s.x, extent(s.batch, g.in_channels * plane, s.x_sample_stride));
      args.input_stride = s.x_sample_stride;
    }
    const float* dy = at(s.dy, extent(s.batch, g.in_channels * g.out_h() * g.out_w(), s.dy_sample_stride));
    float* dx = at(s.dx, extent(s.batch, g.in_channels * plane, s.dx_sample_stride));
    // The cpu backend's kernels, scattering window by window (the GPU gathers; the sums agree).
    if (s.max) {
      max_pool_grad(args, dy, s.dy_sample_stride, dx, s.dx_sample_stride);
    } else {
      avg_pool_grad(args, dy, s.dy_sample_stride, dx, s.dx_sample_stride);
    }
  }

  void execute(const UpdateStep& s, const Step&) {
    float* w = at(s.weights, s.elements);
    const float* g = at(s.gradient, s.elements);
    float* first = s.first.valid() ? at(s.first, s.elements) : nullptr;
    float* second = s.second.valid() ? at(s.second, s.elements) : nullptr;
    float* counter = s.counter.valid() ? at(s.counter, 1) : nullptr;
    if (s.optimizer.adam() && counter == nullptr) fail("an Adam update without its counter");
    if (counter != nullptr) *counter += 1.0f;
    const OptimizerStep step =
        optimizer_step(s.optimizer, s.optimizer.learning_rate, counter != nullptr ? static_cast<int64_t>(*counter) : 1);
    apply_optimizer_step(step, w, g, first, second, 0, s.elements);
  }

  void execute(const CellGradStep& s, const Step&) {
    const int64_t width = (s.gru ? 3 : 4) * s.units;
    const float* gates = at(s.gates, s.rows * width);
    const float* hidden = s.hidden_gates.valid() ? at(s.hidden_gates, s.rows * width) : nullptr;
    const float* bias = s.bias.valid() ? at(s.bias, width) : nullptr;
    const float* c_prev = s.c_prev.valid() ? at(s.c_prev, extent(s.rows, s.units, s.c_prev_stride)) : nullptr;
    const float* h_prev = s.h_prev.valid() ? at(s.h_prev, extent(s.rows, s.units, s.h_prev_stride)) : nullptr;
    const float* dh = at(s.dh, extent(s.rows, s.units, s.dh_stride));
    const float* dc = s.dc.valid() ? at(s.dc, extent(s.rows, s.units, s.dc_stride)) : nullptr;
    float* dgates = at(s.dgates, extent(s.rows, 4 * s.units, s.dgates_stride));
    float* second = at(s.second, extent(s.rows, s.units, s.second_stride));
    for (int64_t r = 0; r < s.rows; ++r) {
      for (int64_t u = 0; u < s.units; ++u) {
        float* out = dgates + r * s.dgates_stride + u * 4;
        const float g_h = dh[r * s.dh_stride + u];
        auto b = [&](int k) { return bias != nullptr ? bias[k * s.units + u] : 0.0f; };
        if (!s.gru) {
          auto pre = [&](int k) { return gates[r * width + k * s.units + u] + b(k); };
          const float i = sigmoid(pre(0)), f = sigmoid(pre(1)), g = std::tanh(pre(2)), o = sigmoid(pre(3));
          const float previous = c_prev != nullptr ? c_prev[r * s.c_prev_stride + u] : 0.0f;
          const float tanh_c = std::tanh(f * previous + i * g);
          const float dc_total = (dc != nullptr ? dc[r * s.dc_stride + u] : 0.0f) + g_h * o * (1.0f - tanh_c * tanh_c);
          out[0] = dc_total * g * i * (1.0f - i);
          out[1] = dc_total * previous * f * (1.0f - f);
          out[2] = dc_total * i * (1.0f - g * g);
          out[3] = g_h * tanh_c * o * (1.0f - o);
          second[r * s.second_stride + u] = dc_total * f;
        } else {
          auto hid = [&](int k) { return hidden != nullptr ? hidden[r * width + k * s.units + u] : 0.0f; };
          const float* px = gates + r * width;
          const float reset = sigmoid(px[u] + hid(0) + b(0));
          const float update = sigmoid(px[s.units + u] + hid(1) + b(1));
          const float candidate = std::tanh(px[2 * s.units + u] + b(2) + reset * hid(2));
          const float previous = h_prev != nullptr ? h_prev[r * s.h_prev_stride + u] : 0.0f;
          const float d_candidate = g_h * (1.0f - update) * (1.0f - candidate * candidate);
          out[0] = d_candidate * hid(2) * reset * (1.0f - reset);
          out[1] = g_h * (previous - candidate) * update * (1.0f - update);
          out[2] = d_candidate;
          out[3] = d_candidate * reset;
          second[r * s.second_stride + u] = g_h * update;
        }
      }
    }
  }

  void execute(const GateGatherStep& s, const Step&) {
    const float* dgates = at(s.dgates, extent(s.rows, 4 * s.units, s.dgates_stride));
    float* out = at(s.out, s.rows * s.count * s.units);
    for (int64_t r = 0; r < s.rows; ++r) {
      for (int g = 0; g < s.count; ++g) {
        for (int64_t u = 0; u < s.units; ++u) {
          out[(r * s.count + g) * s.units + u] = dgates[r * s.dgates_stride + u * 4 + s.columns[static_cast<size_t>(g)]];
        }
      }
    }
  }

  void execute(const ZeroStep& s, const Step&) { std::fill_n(at(s.y, s.elements), s.elements, 0.0f); }

  /// The cpu backend's kernels on the step's buffers: the device kernels' reference.
  void execute(const NormStep& s, const Step&) {
    SerialFor serial;
    const bool per_channel = s.mode == NormMode::kBatchNorm || s.mode == NormMode::kBatchNormGradInput ||
                             s.mode == NormMode::kBatchNormGradWeight;
    const int64_t width = s.channels * s.inner;
    const NormRows x{at(s.x, extent(s.rows, width, s.x_stride)), s.x_stride};
    const bool backward = s.mode != NormMode::kBatchNorm && s.mode != NormMode::kLayerNorm;
    const NormRows dy = backward ? NormRows{at(s.dy, extent(s.rows, width, s.dy_stride)), s.dy_stride} : NormRows{};
    const int64_t params = per_channel ? s.channels : s.inner;
    const float* gamma = s.gamma.valid() ? at(s.gamma, params) : nullptr;
    const float* beta = s.beta.valid() ? at(s.beta, params) : nullptr;
    const bool gradient = s.mode == NormMode::kBatchNormGradWeight || s.mode == NormMode::kLayerNormGradWeight;
    float* out = gradient ? at(s.out, 2 * params) : at(s.out, extent(s.rows, width, s.out_stride));
    const float* previous = s.previous.valid() ? at(s.previous, 2 * params) : nullptr;
    switch (s.mode) {
      case NormMode::kBatchNorm:
        batch_norm(serial, {s.rows, s.channels, s.inner, s.epsilon, s.training, x, gamma, beta, out, s.out_stride});
        break;
      case NormMode::kBatchNormGradInput:
        batch_norm_grad_input(serial, {s.rows, s.channels, s.inner, s.epsilon, x, dy, gamma, out, s.out_stride});
        break;
      case NormMode::kBatchNormGradWeight:
        batch_norm_grad_weight(serial, {s.rows, s.channels, s.inner, s.epsilon, x, dy, out, previous});
        break;
      case NormMode::kLayerNorm:
      case NormMode::kLayerNormGradInput:
      case NormMode::kLayerNormGradWeight: {
        const LayerNormArgs args{s.rows, s.channels, s.inner, s.epsilon, x, dy, gamma, beta, out, s.out_stride, previous};
        if (s.mode == NormMode::kLayerNorm) layer_norm(serial, args);
        if (s.mode == NormMode::kLayerNormGradInput) layer_norm_grad_input(serial, args);
        if (s.mode == NormMode::kLayerNormGradWeight) layer_norm_grad_weight(args);
        break;
      }
    }
  }

  void execute(const DropoutStep& s, const Step&) {
    DropoutArgs args{s.rows, s.width, s.first_row, s.first_element, s.sample_elements, s.layer, s.rate, s.training,
                     at(s.x, extent(s.rows, s.width, s.x_stride)), s.x_stride,
                     at(s.y, extent(s.rows, s.width, s.y_stride)), s.y_stride};
    dropout(args);
  }

  const Plan& plan_;
  const DeviceProgram& program_;
  std::vector<std::vector<float>> memory_;
  int step_ = -1;
  int device_ = 0;
};

int stream_index(const StreamId& stream) { return stream.device * 3 + static_cast<int>(stream.lane); }

}  // namespace

namespace {

/// One run of the whole program on `machine`, in an order the streams and waits allow.
std::vector<int> run_once(Machine& machine, const DeviceProgram& program, std::mt19937& random, uint32_t schedule_seed) {
  const int streams = program.devices * 3;
  std::vector<std::vector<int>> queues(static_cast<size_t>(streams));
  for (size_t i = 0; i < program.steps.size(); ++i) {
    queues[static_cast<size_t>(stream_index(program.steps[i].stream))].push_back(static_cast<int>(i));
  }
  std::vector<size_t> head(static_cast<size_t>(streams), 0);
  std::vector<bool> done(program.steps.size(), false);
  std::vector<int> order;
  while (order.size() < program.steps.size()) {
    std::vector<int> ready;
    for (int s = 0; s < streams; ++s) {
      const auto& queue = queues[static_cast<size_t>(s)];
      if (head[static_cast<size_t>(s)] >= queue.size()) continue;
      const int candidate = queue[head[static_cast<size_t>(s)]];
      const auto& waits = program.steps[static_cast<size_t>(candidate)].waits;
      if (std::all_of(waits.begin(), waits.end(), [&](int w) { return done[static_cast<size_t>(w)]; })) {
        ready.push_back(candidate);
      }
    }
    if (ready.empty()) throw std::logic_error("the program deadlocks: no stream can proceed");
    const int next = schedule_seed == 0
                         ? *std::min_element(ready.begin(), ready.end())
                         : ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(random)];
    machine.run(next);
    done[static_cast<size_t>(next)] = true;
    ++head[static_cast<size_t>(stream_index(program.steps[static_cast<size_t>(next)].stream))];
    order.push_back(next);
  }
  return order;
}

HostTensor output_of(const Machine& machine, const Plan& plan, const DeviceProgram& program) {
  HostTensor output = make_output_tensor(plan);
  for (int id : plan.outputs) {
    place_output_value(plan, plan.value(id), machine.buffer(program.value_buffer[static_cast<size_t>(id)]), output);
  }
  return output;
}

}  // namespace

Interpretation interpret(const Plan& plan, const DeviceProgram& program, uint64_t seed, uint32_t schedule_seed) {
  Machine machine(plan, program, seed);
  std::mt19937 random(schedule_seed);
  Interpretation result;
  result.order = run_once(machine, program, random, schedule_seed);
  for (size_t id = 0; id < plan.values.size(); ++id) {
    // Parameter values have no buffer of their own (their tensors have weight buffers).
    const int buffer = program.value_buffer[id];
    result.values.push_back(buffer >= 0 ? machine.buffer(buffer) : std::vector<float>{});
  }
  result.output = output_of(machine, plan, program);
  return result;
}

std::vector<HostTensor> interpret_runs(const Plan& plan, const DeviceProgram& program, uint64_t seed, int runs,
                                       uint32_t schedule_seed) {
  Machine machine(plan, program, seed);
  std::mt19937 random(schedule_seed);
  std::vector<HostTensor> outputs;
  for (int run = 0; run < runs; ++run) {
    run_once(machine, program, random, schedule_seed);
    outputs.push_back(output_of(machine, plan, program));
  }
  return outputs;
}

}  // namespace splitscope::testing
