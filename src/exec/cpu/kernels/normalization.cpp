#include "exec/cpu/kernels/normalization.hpp"

#include <cmath>
#include <utility>
#include <vector>

namespace splitscope {
namespace {

constexpr int64_t kNormChannelsPerChunk = 1;
constexpr int64_t kNormRowsPerChunk = 16;

/// Mean and 1/σ of one channel over its rows and inner elements.
struct Moments {
  double mean = 0;
  double inv_std = 1;
};

Moments channel_moments(NormRows x, int64_t rows, int64_t inner, int64_t c, double epsilon) {
  double sum = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x.data + r * x.stride + c * inner;
    for (int64_t i = 0; i < inner; ++i) sum += p[i];
  }
  const double count = static_cast<double>(rows * inner);
  const double mean = sum / count;
  double squares = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x.data + r * x.stride + c * inner;
    for (int64_t i = 0; i < inner; ++i) squares += (p[i] - mean) * (p[i] - mean);
  }
  return {mean, 1.0 / std::sqrt(squares / count + epsilon)};
}

Moments run_moments(const float* x, int64_t features, double epsilon) {
  double sum = 0;
  for (int64_t f = 0; f < features; ++f) sum += x[f];
  const double mean = sum / static_cast<double>(features);
  double squares = 0;
  for (int64_t f = 0; f < features; ++f) squares += (x[f] - mean) * (x[f] - mean);
  return {mean, 1.0 / std::sqrt(squares / static_cast<double>(features) + epsilon)};
}

/// Σ dY and Σ dY·x̂ over channel c's rows and inner elements: what both of
/// batch norm's gradients are made of.
std::pair<double, double> channel_gradient_sums(const NormRows& x, const NormRows& dy, int64_t rows, int64_t inner,
                                                int64_t c, const Moments& m) {
  double sum_dy = 0;
  double sum_dy_xhat = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xs = x.data + r * x.stride + c * inner;
    const float* dys = dy.data + r * dy.stride + c * inner;
    for (int64_t i = 0; i < inner; ++i) {
      sum_dy += dys[i];
      sum_dy_xhat += dys[i] * (xs[i] - m.mean) * m.inv_std;
    }
  }
  return {sum_dy, sum_dy_xhat};
}

}  // namespace

void batch_norm(ParallelFor& parallel, const BatchNormArgs& a) {
  parallel.run(a.channels, kNormChannelsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      // Inference: the running statistics of a fresh layer, mean 0 and variance 1.
      const Moments m = a.training ? channel_moments(a.x, a.rows, a.inner, c, a.epsilon)
                                   : Moments{0.0, 1.0 / std::sqrt(1.0 + a.epsilon)};
      const double scale = a.gamma[c] * m.inv_std;
      for (int64_t r = 0; r < a.rows; ++r) {
        const float* x = a.x.data + r * a.x.stride + c * a.inner;
        float* y = a.y + r * a.y_stride + c * a.inner;
        for (int64_t i = 0; i < a.inner; ++i) y[i] = static_cast<float>((x[i] - m.mean) * scale + a.beta[c]);
      }
    }
  });
}

void batch_norm_grad_input(ParallelFor& parallel, const BatchNormGradInputArgs& a) {
  parallel.run(a.channels, kNormChannelsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const Moments m = channel_moments(a.x, a.rows, a.inner, c, a.epsilon);
      const auto [sum_dy, sum_dy_xhat] = channel_gradient_sums(a.x, a.dy, a.rows, a.inner, c, m);
      const double count = static_cast<double>(a.rows * a.inner);
      const double scale = a.gamma[c] * m.inv_std / count;
      for (int64_t r = 0; r < a.rows; ++r) {
        const float* x = a.x.data + r * a.x.stride + c * a.inner;
        const float* dy = a.dy.data + r * a.dy.stride + c * a.inner;
        float* dx = a.dx + r * a.dx_stride + c * a.inner;
        for (int64_t i = 0; i < a.inner; ++i) {
          const double xhat = (x[i] - m.mean) * m.inv_std;
          dx[i] = static_cast<float>(scale * (count * dy[i] - sum_dy - xhat * sum_dy_xhat));
        }
      }
    }
  });
}

void batch_norm_grad_weight(ParallelFor& parallel, const BatchNormGradWeightArgs& a) {
  float* dbeta = a.dgamma + a.channels;
  parallel.run(a.channels, kNormChannelsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const Moments m = channel_moments(a.x, a.rows, a.inner, c, a.epsilon);
      const auto [sum_dy, sum_dy_xhat] = channel_gradient_sums(a.x, a.dy, a.rows, a.inner, c, m);
      const float earlier_gamma = a.previous != nullptr ? a.previous[c] : 0.0f;
      const float earlier_beta = a.previous != nullptr ? a.previous[a.channels + c] : 0.0f;
      a.dgamma[c] = earlier_gamma + static_cast<float>(sum_dy_xhat);
      dbeta[c] = earlier_beta + static_cast<float>(sum_dy);
    }
  });
}

void layer_norm(ParallelFor& parallel, const LayerNormArgs& a) {
  parallel.run(a.rows, kNormRowsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t g = 0; g < a.groups; ++g) {
        const float* x = a.x.data + r * a.x.stride + g * a.features;
        float* y = a.out + r * a.out_stride + g * a.features;
        const Moments m = run_moments(x, a.features, a.epsilon);
        for (int64_t f = 0; f < a.features; ++f) {
          y[f] = static_cast<float>((x[f] - m.mean) * m.inv_std * a.gamma[f] + a.beta[f]);
        }
      }
    }
  });
}

void layer_norm_grad_input(ParallelFor& parallel, const LayerNormArgs& a) {
  parallel.run(a.rows, kNormRowsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t g = 0; g < a.groups; ++g) {
        const float* x = a.x.data + r * a.x.stride + g * a.features;
        const float* dy = a.dy.data + r * a.dy.stride + g * a.features;
        float* dx = a.out + r * a.out_stride + g * a.features;
        const Moments m = run_moments(x, a.features, a.epsilon);
        double sum_g = 0;
        double sum_g_xhat = 0;
        for (int64_t f = 0; f < a.features; ++f) {
          const double gf = static_cast<double>(a.gamma[f]) * dy[f];
          sum_g += gf;
          sum_g_xhat += gf * (x[f] - m.mean) * m.inv_std;
        }
        const double count = static_cast<double>(a.features);
        for (int64_t f = 0; f < a.features; ++f) {
          const double gf = static_cast<double>(a.gamma[f]) * dy[f];
          const double xhat = (x[f] - m.mean) * m.inv_std;
          dx[f] = static_cast<float>((count * gf - sum_g - xhat * sum_g_xhat) * m.inv_std / count);
        }
      }
    }
  });
}

void layer_norm_grad_weight(const LayerNormArgs& a) {
  std::vector<double> dgamma(static_cast<size_t>(a.features), 0.0);
  std::vector<double> dbeta(static_cast<size_t>(a.features), 0.0);
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t g = 0; g < a.groups; ++g) {
      const float* x = a.x.data + r * a.x.stride + g * a.features;
      const float* dy = a.dy.data + r * a.dy.stride + g * a.features;
      const Moments m = run_moments(x, a.features, a.epsilon);
      for (int64_t f = 0; f < a.features; ++f) {
        dgamma[static_cast<size_t>(f)] += dy[f] * (x[f] - m.mean) * m.inv_std;
        dbeta[static_cast<size_t>(f)] += dy[f];
      }
    }
  }
  for (int64_t f = 0; f < a.features; ++f) {
    const float earlier_gamma = a.previous != nullptr ? a.previous[f] : 0.0f;
    const float earlier_beta = a.previous != nullptr ? a.previous[a.features + f] : 0.0f;
    a.out[f] = earlier_gamma + static_cast<float>(dgamma[static_cast<size_t>(f)]);
    a.out[a.features + f] = earlier_beta + static_cast<float>(dbeta[static_cast<size_t>(f)]);
  }
}

}  // namespace splitscope
