#include "sim/costs/conv_algorithm.hpp"

#include <algorithm>
#include <cmath>

#include "sim/costs/gemm_efficiency.hpp"
#include "util/check.hpp"
#include "util/ceil_div.hpp"

namespace splitscope {
namespace {

/// cuDNN's FFT algorithm: stride 1, and the padded input at most this per side.
constexpr int64_t kFftMaxSide = 256;

// Transform FLOPs (conv_algorithm.hpp): F(2x2, 3x3) per 4x4 input tile and
// channel, per 2x2 output tile and filter, per 3x3 filter; F(4x4, 3x3) likewise.
constexpr double kF2InputFlops = 32;
constexpr double kF2OutputFlops = 24;
constexpr double kF2FilterFlops = 70;
constexpr double kF4InputFlops = 336;
constexpr double kF4OutputFlops = 200;
constexpr double kF4FilterFlops = 189;


int64_t next_power_of_two(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

double d(int64_t v) { return static_cast<double>(v); }

/// A kernel that does `flops` on the CUDA cores and moves `bytes`, launch included.
double kernel_seconds(const DeviceFacts& facts, double flops, double bytes) {
  return std::max(flops / facts.vector_flops_per_second, bytes / facts.dram_bytes_per_second) +
         facts.launch_seconds;
}

double input_bytes(const DeviceFacts& facts, const ConvShape& s) {
  return facts.element_bytes * d(s.rows * s.groups * s.channels * s.height * s.width);
}
double filter_bytes(const DeviceFacts& facts, const ConvShape& s) {
  return facts.element_bytes * d(s.groups * s.filters * s.channels * s.kernel_h * s.kernel_w);
}
double output_bytes(const DeviceFacts& facts, const ConvShape& s) {
  return facts.element_bytes * d(s.rows * s.groups * s.filters * s.out_h * s.out_w);
}

ConvEstimate implicit_gemm(const DeviceFacts& facts, const ConvShape& s) {
  const GemmShape gemm{s.rows * s.out_h * s.out_w, s.filters, s.channels * s.kernel_h * s.kernel_w, s.groups};
  const double bytes = input_bytes(facts, s) + filter_bytes(facts, s) + output_bytes(facts, s);
  const GemmEstimate product = estimate_gemm(facts, gemm, static_cast<int64_t>(bytes));
  return {ConvAlgorithm::kImplicitGemm, product.kernels, product.seconds + facts.launch_seconds};
}

ConvEstimate winograd_fused(const DeviceFacts& facts, const ConvShape& s) {
  const int64_t tiles = s.rows * ceil_div(s.out_h, 2) * ceil_div(s.out_w, 2);
  const GemmShape gemm{tiles, s.filters, s.channels, 16 * s.groups};
  const double transformed_filters = 16 * facts.element_bytes * d(s.groups * s.filters * s.channels);
  const double transform_flops =
      d(s.groups) * (kF2InputFlops * d(tiles * s.channels) + kF2OutputFlops * d(tiles * s.filters));
  const double compute =
      best_tile_seconds(facts, gemm) + transform_flops / facts.vector_flops_per_second;
  const double bytes = input_bytes(facts, s) + transformed_filters + output_bytes(facts, s);
  const double main = std::max(compute, bytes / facts.dram_bytes_per_second) + facts.launch_seconds;
  const double filters = kernel_seconds(facts, kF2FilterFlops * d(s.groups * s.filters * s.channels),
                                        filter_bytes(facts, s) + transformed_filters);
  return {ConvAlgorithm::kWinogradFused, 2, main + filters};
}

/// F(4×4,3×3)'s 4×4 output tiles.
int64_t f4_tiles(const ConvShape& s) { return s.rows * ceil_div(s.out_h, 4) * ceil_div(s.out_w, 4); }

/// F(4×4,3×3) in four kernels, whose transformed tensors (36 floats a 6×6
/// tile) go through DRAM: X's tiles (336 FLOPs a tile and channel), the
/// filters or dW (189 a filter and channel), the output's or dZ's tiles
/// (200 a tile and filter; the backward pass runs each transform's
/// transpose, with its FLOP count), and `product` over the 36 frequencies.
ConvEstimate winograd_f4_kernels(const DeviceFacts& facts, const ConvShape& s, const GemmShape& product_shape) {
  const int64_t tiles = f4_tiles(s);
  const double per_value = 36 * facts.element_bytes;  // a transformed 6x6 tile
  const double in_transformed = per_value * d(s.groups * tiles * s.channels);
  const double filters_transformed = per_value * d(s.groups * s.filters * s.channels);
  const double out_transformed = per_value * d(s.groups * tiles * s.filters);
  const double input = kernel_seconds(facts, kF4InputFlops * d(s.groups * tiles * s.channels),
                                      input_bytes(facts, s) + in_transformed);
  const double filters = kernel_seconds(facts, kF4FilterFlops * d(s.groups * s.filters * s.channels),
                                        filter_bytes(facts, s) + filters_transformed);
  const GemmEstimate product = estimate_gemm(
      facts, product_shape, static_cast<int64_t>(in_transformed + filters_transformed + out_transformed));
  const double products = product.seconds + facts.launch_seconds;
  const double output = kernel_seconds(facts, kF4OutputFlops * d(s.groups * tiles * s.filters),
                                       out_transformed + output_bytes(facts, s));
  return {ConvAlgorithm::kWinogradNonfused, 3 + product.kernels, input + filters + products + output};
}

/// Forward: per frequency, tiles × channels times channels × filters.
ConvEstimate winograd_nonfused(const DeviceFacts& facts, const ConvShape& s) {
  return winograd_f4_kernels(facts, s, GemmShape{f4_tiles(s), s.filters, s.channels, 36 * s.groups});
}

ConvEstimate weight_gradient_implicit_gemm(const DeviceFacts& facts, const ConvShape& s) {
  const GemmShape gemm{s.filters, s.channels * s.kernel_h * s.kernel_w, s.rows * s.out_h * s.out_w, s.groups};
  const double bytes = input_bytes(facts, s) + output_bytes(facts, s) + filter_bytes(facts, s);
  const GemmEstimate product = estimate_gemm(facts, gemm, static_cast<int64_t>(bytes));
  return {ConvAlgorithm::kImplicitGemm, product.kernels, product.seconds + facts.launch_seconds};
}

/// Weight gradient: per frequency, filters × tiles of dZ times tiles × channels of X.
ConvEstimate weight_gradient_winograd_nonfused(const DeviceFacts& facts, const ConvShape& s) {
  return winograd_f4_kernels(facts, s, GemmShape{s.filters, s.channels, f4_tiles(s), 36 * s.groups});
}

ConvEstimate fft(const DeviceFacts& facts, const ConvShape& s) {
  const int64_t nh = next_power_of_two(s.height + 2 * s.pad_h);
  const int64_t nw = next_power_of_two(s.width + 2 * s.pad_w);
  const int64_t frequencies = nh * (nw / 2 + 1);
  const double plane_flops = 2.5 * d(nh * nw) * std::log2(d(nh * nw));
  const double spectrum = 2 * facts.element_bytes * d(frequencies);  // a complex value
  const double in_planes = d(s.rows * s.groups * s.channels);
  const double filter_planes = d(s.groups * s.filters * s.channels);
  const double out_planes = d(s.rows * s.groups * s.filters);
  const double input = kernel_seconds(facts, in_planes * plane_flops, input_bytes(facts, s) + in_planes * spectrum);
  const double filters =
      kernel_seconds(facts, filter_planes * plane_flops, filter_bytes(facts, s) + filter_planes * spectrum);
  const GemmShape gemm{s.rows, s.filters, s.channels, frequencies * s.groups};
  const double product_bytes = (in_planes + filter_planes + out_planes) * spectrum;
  const GemmEstimate product = estimate_gemm(facts, gemm, static_cast<int64_t>(product_bytes), 8);
  const double products = product.seconds + facts.launch_seconds;
  const double output = kernel_seconds(facts, out_planes * plane_flops, out_planes * spectrum + output_bytes(facts, s));
  return {ConvAlgorithm::kFft, 3 + product.kernels, input + filters + products + output};
}

}  // namespace

std::string_view to_string(ConvAlgorithm algorithm) {
  switch (algorithm) {
    case ConvAlgorithm::kImplicitGemm: return "implicit_gemm";
    case ConvAlgorithm::kWinogradFused: return "winograd";
    case ConvAlgorithm::kWinogradNonfused: return "winograd_nonfused";
    case ConvAlgorithm::kFft: return "fft";
  }
  return "?";
}

bool conv_supports(ConvAlgorithm algorithm, const ConvShape& shape) {
  const bool stride_one = shape.stride_h == 1 && shape.stride_w == 1;
  switch (algorithm) {
    case ConvAlgorithm::kImplicitGemm: return true;
    case ConvAlgorithm::kWinogradFused:
    case ConvAlgorithm::kWinogradNonfused: return stride_one && shape.kernel_h == 3 && shape.kernel_w == 3;
    case ConvAlgorithm::kFft:
      return stride_one && shape.kernel_h > 1 && shape.kernel_w > 1 &&
             shape.height + 2 * shape.pad_h <= kFftMaxSide && shape.width + 2 * shape.pad_w <= kFftMaxSide;
  }
  return false;
}

ConvEstimate estimate_conv_with(const DeviceFacts& facts, const ConvShape& shape, ConvAlgorithm algorithm) {
  SPLITSCOPE_CHECK(conv_supports(algorithm, shape), "the algorithm does not support the convolution");
  switch (algorithm) {
    case ConvAlgorithm::kImplicitGemm: return implicit_gemm(facts, shape);
    case ConvAlgorithm::kWinogradFused: return winograd_fused(facts, shape);
    case ConvAlgorithm::kWinogradNonfused: return winograd_nonfused(facts, shape);
    case ConvAlgorithm::kFft: return fft(facts, shape);
  }
  return implicit_gemm(facts, shape);
}

ConvEstimate estimate_conv(const DeviceFacts& facts, const ConvShape& shape) {
  ConvEstimate best = implicit_gemm(facts, shape);
  for (ConvAlgorithm algorithm :
       {ConvAlgorithm::kWinogradFused, ConvAlgorithm::kWinogradNonfused, ConvAlgorithm::kFft}) {
    if (!conv_supports(algorithm, shape)) continue;
    const ConvEstimate candidate = estimate_conv_with(facts, shape, algorithm);
    if (candidate.seconds < best.seconds) best = candidate;
  }
  return best;
}

ConvEstimate estimate_conv_weight_gradient(const DeviceFacts& facts, const ConvShape& shape) {
  ConvEstimate best = weight_gradient_implicit_gemm(facts, shape);
  if (conv_supports(ConvAlgorithm::kWinogradNonfused, shape)) {
    const ConvEstimate winograd = weight_gradient_winograd_nonfused(facts, shape);
    if (winograd.seconds < best.seconds) best = winograd;
  }
  return best;
}

}  // namespace splitscope
