#pragma once
/// \file
/// Which algorithm cuDNN runs a forward convolution with, and what it costs.
/// Frameworks ask cuDNN for the fastest algorithm that supports the shape
/// (cudnnFindConvolutionForwardAlgorithm, PyTorch's cudnn.benchmark,
/// TensorFlow's autotuning), so the rule prices every algorithm the shape
/// allows and takes the fastest. What each supports is cuDNN's documented
/// support table for cudnnConvolutionForward (cuDNN API reference); the
/// FLOP counts and transforms are Lavin & Gray, "Fast Algorithms for
/// Convolutional Neural Networks" (CVPR 2016) and Vasilache et al., "Fast
/// Convolutional Nets With fbfft" (ICLR 2015):
///
/// - implicit GEMM (IMPLICIT_PRECOMP_GEMM, any shape): one product per group,
///   M = rows·Ho·Wo, N = filters, K = channels·kh·kw, priced by
///   gemm_efficiency.hpp, moving the input, the filters and the output; one kernel.
/// - Winograd F(2×2, 3×3), fused (WINOGRAD: 3×3 filters, stride 1): 4×4
///   input tiles give 2×2 outputs; the products are 16 per group, M = rows ·
///   ceil(Ho/2)·ceil(Wo/2), N = filters, K = channels: 36/16 = 2.25× fewer
///   multiplications than direct. Transforms (per tile and channel: input 32
///   FLOPs, output 24) run inside, on the CUDA cores, which read the input
///   and the transformed filters and write the output; the filter transform
///   (70 FLOPs per filter and channel) is a kernel of its own: two kernels.
/// - Winograd F(4×4, 3×3), non-fused (WINOGRAD_NONFUSED: 3×3, stride 1): 6×6
///   tiles give 4×4 outputs, 36 products, 144/36 = 4× fewer multiplications;
///   the input, filter and output transforms are kernels of their own that
///   write and read the transformed tensors (36/16 of the input per tile,
///   36/9 of the filters, 36/16 of the output) through DRAM: four kernels.
///   Transform FLOPs from Lavin & Gray's matrices B^T, G, A^T (one FLOP per
///   nonzero beyond the first of each row, one per coefficient other than
///   ±1, both passes of the 2-D transform): 336 per 6×6 input tile, 200 per
///   4×4 output tile, 189 per 3×3 filter; for F(2×2, 3×3) the same count
///   gives Lavin & Gray's 32 and 24, and 70 per filter.
/// - FFT (FFT: stride 1, padded input at most 256 per side): every input,
///   filter and output plane through a real 2-D FFT of the padded size
///   rounded up to a power of two (n×n: 2.5·n²·log2(n²) FLOPs), the products
///   as one complex product per frequency (n·(n/2+1) of them: M = rows,
///   N = filters, K = channels, 4 real multiply-adds each), the spectra
///   written and read through DRAM (8 bytes per complex value): four kernels.
///
/// Each kernel costs max(its FLOPs at its peak, its bytes at the achieved
/// DRAM rate) plus a launch; products at the matrix peak with tile and wave
/// quantization, transforms at the fp32 (CUDA core) peak.

#include <cstdint>
#include <string_view>

#include "sim/machine/device_facts.hpp"

namespace splitscope {

enum class ConvAlgorithm { kImplicitGemm, kWinogradFused, kWinogradNonfused, kFft };

/// "implicit_gemm", "winograd", "winograd_nonfused", "fft"
std::string_view to_string(ConvAlgorithm algorithm);

/// One slice of a (grouped) convolution, float32.
struct ConvShape {
  int64_t rows = 1;         ///< samples
  int64_t groups = 1;       ///< groups the slice covers
  int64_t channels = 1;     ///< input channels per group
  int64_t filters = 1;      ///< output channels per group (the slice's share)
  int64_t height = 1, width = 1;          ///< input plane
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t out_h = 1, out_w = 1;
};

struct ConvEstimate {
  ConvAlgorithm algorithm = ConvAlgorithm::kImplicitGemm;
  int kernels = 1;     ///< the algorithm's, and a reduction where a product splits K
  double seconds = 0;  ///< launches included
};

/// Whether cuDNN's `algorithm` supports `shape` (the support table above).
bool conv_supports(ConvAlgorithm algorithm, const ConvShape& shape);

/// The time of `shape` by `algorithm` (which must support it), launches included.
ConvEstimate estimate_conv_with(const DeviceFacts& facts, const ConvShape& shape, ConvAlgorithm algorithm);

/// The fastest supported algorithm for `shape`, implicit GEMM on a tie.
ConvEstimate estimate_conv(const DeviceFacts& facts, const ConvShape& shape);

/// The weight gradient of the convolution `shape`, dW = Σ over samples and
/// pixels of dZ ⊗ X patches, by the fastest of cuDNN's backward-filter
/// algorithms this models (cuDNN API reference, cudnnConvolutionBackwardFilter):
/// - implicit GEMM: one product per group, M = filters, N = channels·kh·kw,
///   K = rows·Ho·Wo (a long K, which split-K serves), moving X, dZ and dW;
/// - Winograd non-fused, 3×3 stride 1 (there is no fused backward-filter
///   Winograd): the forward's F(4×4,3×3) run backwards. Per 6×6 tile,
///   dW's transform-domain sum is Σ_tiles (A·dZ·Aᵀ) ⊙ (Bᵀ·X·B), then Gᵀ·(·)·G:
///   X's tiles transformed as the forward's input (336 FLOPs a tile and
///   channel), dZ's 4×4 tiles by the output transform's transpose (200
///   FLOPs a tile and filter), 36 products of M = filters, N = channels,
///   K = tiles, and the 36 sums brought back to 3×3 by the filter
///   transform's transpose (189 FLOPs a filter and channel); the
///   transformed tensors go through DRAM (36 floats a tile).
/// FFT is left out. Implicit GEMM on a tie.
ConvEstimate estimate_conv_weight_gradient(const DeviceFacts& facts, const ConvShape& shape);

}  // namespace splitscope
