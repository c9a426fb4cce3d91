#include "exec/cpu/kernels/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace splitscope {
namespace {

/// One sample's one head: where its Q, K, V rows start and their strides.
struct AttentionHead {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t stride = 0;  ///< 3H: from one position to the next
  int64_t width = 0;   ///< d
  int64_t positions = 0;
  bool causal = false;
};

AttentionHead attention_head(const AttentionArgs& a, int64_t row, int64_t head) {
  const int64_t d = a.features / a.heads;
  const float* base = a.qkv + row * a.qkv_stride + head * d;
  return AttentionHead{base, base + a.features, base + 2 * a.features, 3 * a.features, d, a.positions, a.causal};
}

/// P [T, T] = softmax(Q·Kᵀ/√d + mask) row by row, in double.
void attention_probabilities(const AttentionHead& h, std::vector<double>& p) {
  const int64_t t_count = h.positions;
  const double scale = 1.0 / std::sqrt(static_cast<double>(h.width));
  p.assign(static_cast<size_t>(t_count * t_count), 0.0);
  for (int64_t i = 0; i < t_count; ++i) {
    const int64_t last = h.causal ? i : t_count - 1;
    double top = -std::numeric_limits<double>::infinity();
    double* row = p.data() + i * t_count;
    for (int64_t j = 0; j <= last; ++j) {
      double dot = 0;
      for (int64_t e = 0; e < h.width; ++e) {
        dot += static_cast<double>(h.q[i * h.stride + e]) * static_cast<double>(h.k[j * h.stride + e]);
      }
      row[j] = dot * scale;
      top = std::max(top, row[j]);
    }
    double total = 0;
    for (int64_t j = 0; j <= last; ++j) {
      row[j] = std::exp(row[j] - top);
      total += row[j];
    }
    for (int64_t j = 0; j <= last; ++j) row[j] /= total;  // masked positions stay 0
  }
}

}  // namespace

void attention(const AttentionArgs& a) {
  const int64_t d = a.features / a.heads;
  std::vector<double> p;
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t head = 0; head < a.heads; ++head) {
      const AttentionHead h = attention_head(a, r, head);
      attention_probabilities(h, p);
      for (int64_t i = 0; i < a.positions; ++i) {
        float* out = a.out + r * a.out_stride + i * a.features + head * d;
        for (int64_t e = 0; e < d; ++e) {
          double sum = 0;
          for (int64_t j = 0; j < a.positions; ++j) {
            sum += p[static_cast<size_t>(i * a.positions + j)] * static_cast<double>(h.v[j * h.stride + e]);
          }
          out[e] = static_cast<float>(sum);
        }
      }
    }
  }
}

void attention_grad(const AttentionArgs& a) {
  const int64_t d = a.features / a.heads;
  const int64_t t_count = a.positions;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> p;
  std::vector<double> ds(static_cast<size_t>(t_count * t_count));
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t head = 0; head < a.heads; ++head) {
      const AttentionHead h = attention_head(a, r, head);
      attention_probabilities(h, p);
      const float* d_out = a.d_context + r * a.d_context_stride + head * d;
      float* dq = a.out + r * a.out_stride + head * d;
      float* dk = dq + a.features;
      float* dv = dq + 2 * a.features;
      const int64_t stride = 3 * a.features;
      // dS = P ⊙ (dP - rowsum(dP ⊙ P)), dP = dO·Vᵀ.
      for (int64_t i = 0; i < t_count; ++i) {
        double weighted = 0;
        for (int64_t j = 0; j < t_count; ++j) {
          double dp = 0;
          for (int64_t e = 0; e < d; ++e) {
            dp += static_cast<double>(d_out[i * a.features + e]) * static_cast<double>(h.v[j * stride + e]);
          }
          ds[static_cast<size_t>(i * t_count + j)] = dp;
          weighted += dp * p[static_cast<size_t>(i * t_count + j)];
        }
        for (int64_t j = 0; j < t_count; ++j) {
          const size_t at = static_cast<size_t>(i * t_count + j);
          ds[at] = p[at] * (ds[at] - weighted);
        }
      }
      for (int64_t i = 0; i < t_count; ++i) {
        for (int64_t e = 0; e < d; ++e) {
          double q_sum = 0;  // dQ[i] = Σ_j dS[i, j]·K[j]/√d
          double k_sum = 0;  // dK[i] = Σ_j dS[j, i]·Q[j]/√d
          double v_sum = 0;  // dV[i] = Σ_j P[j, i]·dO[j]
          for (int64_t j = 0; j < t_count; ++j) {
            q_sum += ds[static_cast<size_t>(i * t_count + j)] * static_cast<double>(h.k[j * stride + e]);
            k_sum += ds[static_cast<size_t>(j * t_count + i)] * static_cast<double>(h.q[j * stride + e]);
            v_sum += p[static_cast<size_t>(j * t_count + i)] * static_cast<double>(d_out[j * a.features + e]);
          }
          dq[i * stride + e] = static_cast<float>(q_sum * scale);
          dk[i * stride + e] = static_cast<float>(k_sum * scale);
          dv[i * stride + e] = static_cast<float>(v_sum);
        }
      }
    }
  }
}

}  // namespace splitscope
