// The convolution rule (sim/costs/conv_algorithm.hpp): cuDNN's support table, the
// multiplications Winograd saves, and the fastest algorithm by hand.

#include "sim/costs/conv_algorithm.hpp"

#include <gtest/gtest.h>

#include "rule_devices.hpp"
#include "sim/costs/gemm_efficiency.hpp"

namespace splitscope {
namespace conv_algorithm_test {
namespace {

using testing::v100;

/// 32 × 128 channels of 28×28 through 128 3×3 filters, padding 1 (a VGG block).
ConvShape vgg_block() {
  ConvShape s;
  s.rows = 32;
  s.channels = 128;
  s.filters = 128;
  s.height = s.width = 28;
  s.kernel_h = s.kernel_w = 3;
  s.pad_h = s.pad_w = 1;
  s.out_h = s.out_w = 28;
  return s;
}

TEST(ConvAlgorithm, WinogradDoesFewerMultiplications) {
  // Direct: 2·32·28·28·128·128·9 = 7,398,752,256 FLOPs. F(2×2,3×3): 16
  // products over 32·14·14 = 6272 tiles: 2·16·6272·128·128 = 3,288,334,336,
  // 2.25× fewer; F(4×4,3×3): 36 products over 32·7·7 = 1568 tiles:
  // 2·36·1568·128·128 = 1,849,688,064, 4× fewer.
  const double direct = 2.0 * 32 * 28 * 28 * 128 * 128 * 9;
  const double f2 = 2.0 * 16 * (32 * 14 * 14) * 128 * 128;
  const double f4 = 2.0 * 36 * (32 * 7 * 7) * 128 * 128;
  EXPECT_DOUBLE_EQ(direct / f2, 2.25);
  EXPECT_DOUBLE_EQ(direct / f4, 4.0);
}

TEST(ConvAlgorithm, ThreeByThreeStrideOneRunsAsFusedWinograd) {
  // On a V100 (80 SMs, 196.25e9 FLOP/s each, 810e9 B/s, 5 µs launches):
  // F(2×2,3×3): 16 products of 6272 × 128 × 128. In 256×128 tiles: 25 · 16
  // = 400 tiles, 5 waves of 2·256·128·128 / 196.25e9 = 42.745 µs: 213.72 µs;
  // the transforms, (32 + 24)·6272·128 FLOPs at 15.7e12: 2.86 µs; its bytes
  // (input 12,845,056 + transformed filters 1,048,576 + output 12,845,056) at
  // 810e9: 33.0 µs, below. Main kernel 216.59 + 5 µs; the filter transform
  // kernel moves 589,824 + 1,048,576 bytes, 2.02 µs + 5 µs. Total 228.61 µs,
  // against 485.9 µs by implicit GEMM, 249.6 µs by F(4×4,3×3) in four
  // kernels and 483.7 µs by FFT.
  const ConvShape shape = vgg_block();
  for (ConvAlgorithm algorithm : {ConvAlgorithm::kImplicitGemm, ConvAlgorithm::kWinogradFused,
                                  ConvAlgorithm::kWinogradNonfused, ConvAlgorithm::kFft}) {
    EXPECT_TRUE(conv_supports(algorithm, shape)) << to_string(algorithm);
  }
  const ConvEstimate best = estimate_conv(v100(), shape);
  EXPECT_EQ(best.algorithm, ConvAlgorithm::kWinogradFused);
  EXPECT_EQ(best.kernels, 2);
  const double main = 5 * 2.0 * 256 * 128 * 128 / 196.25e9 + 56.0 * 6272 * 128 / 15.7e12 + 5e-6;
  const double filters = (589824.0 + 1048576.0) / 810e9 + 5e-6;
  EXPECT_NEAR(best.seconds, main + filters, 1e-12);
  EXPECT_NEAR(best.seconds, 228.61e-6, 0.01e-6);
  EXPECT_NEAR(estimate_conv_with(v100(), shape, ConvAlgorithm::kImplicitGemm).seconds, 485.88e-6, 0.01e-6);
  EXPECT_NEAR(estimate_conv_with(v100(), shape, ConvAlgorithm::kWinogradNonfused).seconds, 249.61e-6, 0.01e-6);
  EXPECT_NEAR(estimate_conv_with(v100(), shape, ConvAlgorithm::kFft).seconds, 483.70e-6, 0.01e-6);
}

TEST(ConvAlgorithm, AWeightGradientRunsTheForwardsWinogradBackwards) {
  // The VGG block's dW on a V100. F(4×4,3×3) over 32·7·7 = 1568 tiles:
  // - X's tiles: 336·1568·128 FLOPs (4.3 µs) against 12,845,056 B read and
  //   144·1568·128 = 28,901,376 B written at 810e9 (51.54 µs), + 5 µs;
  // - dZ's tiles: the same bytes (200 FLOPs a tile and filter), + 5 µs;
  // - 36 products of 128 × 128 × 1568 over 57,802,752 + 2,359,296 B, + 5 µs;
  // - back to 3×3: 189·128·128 FLOPs against 2,359,296 + 589,824 B, + 5 µs.
  // Implicit GEMM does the direct 7.40 GFLOP, over 471 µs at the peak.
  const ConvShape shape = vgg_block();
  const ConvEstimate best = estimate_conv_weight_gradient(v100(), shape);
  EXPECT_EQ(best.algorithm, ConvAlgorithm::kWinogradNonfused);
  const double tiles = 41'746'432.0 / 810e9 + 5e-6;
  const GemmEstimate products = estimate_gemm(v100(), GemmShape{128, 128, 1568, 36}, 60'162'048);
  const double weights = (2'359'296.0 + 589'824.0) / 810e9 + 5e-6;
  EXPECT_NEAR(best.seconds, 2 * tiles + products.seconds + 5e-6 + weights, 1e-12);
  EXPECT_EQ(best.kernels, 3 + products.kernels);
  EXPECT_LT(best.seconds, 7'398'752'256.0 / 15.7e12);

  // Stride 2 has no Winograd form: one product, M = 128 filters, N = 128·9, K = 32·14·14.
  ConvShape strided = shape;
  strided.stride_h = strided.stride_w = 2;
  strided.out_h = strided.out_w = 14;
  const ConvEstimate gemm = estimate_conv_weight_gradient(v100(), strided);
  EXPECT_EQ(gemm.algorithm, ConvAlgorithm::kImplicitGemm);
  EXPECT_NEAR(gemm.seconds,
              estimate_gemm(v100(), GemmShape{128, 1152, 6272, 1}, 12'845'056 + 3'211'264 + 589'824).seconds + 5e-6,
              1e-12);
}

TEST(ConvAlgorithm, ImplicitGemmIsOneProductPerGroup) {
  // AlexNet's first layer: 11×11, stride 4, 3 → 96 channels, 227² → 55²,
  // batch 64. Only implicit GEMM supports stride 4: M = 64·55·55 = 193,600,
  // N = 96, K = 3·11·11 = 363.
  ConvShape s;
  s.rows = 64;
  s.channels = 3;
  s.filters = 96;
  s.height = s.width = 227;
  s.kernel_h = s.kernel_w = 11;
  s.stride_h = s.stride_w = 4;
  s.out_h = s.out_w = 55;
  EXPECT_FALSE(conv_supports(ConvAlgorithm::kWinogradFused, s));
  EXPECT_FALSE(conv_supports(ConvAlgorithm::kWinogradNonfused, s));
  EXPECT_FALSE(conv_supports(ConvAlgorithm::kFft, s));
  const ConvEstimate best = estimate_conv(v100(), s);
  EXPECT_EQ(best.algorithm, ConvAlgorithm::kImplicitGemm);
  const double bytes = 4.0 * (64 * 3 * 227 * 227 + 96 * 3 * 121 + 64 * 96 * 55 * 55);
  EXPECT_DOUBLE_EQ(best.seconds,
                   estimate_gemm(v100(), {193600, 96, 363, 1}, static_cast<int64_t>(bytes)).seconds + 5e-6);
}

TEST(ConvAlgorithm, FiveByFiveStrideOneMayRunAsFft) {
  // AlexNet's second layer: 5×5, padding 2, 27², 2 groups of 48 → 128
  // channels, batch 64. Winograd needs 3×3; FFT takes it (32×32 transforms
  // of the padded 31×31 planes), faster than implicit GEMM here.
  ConvShape s;
  s.rows = 64;
  s.groups = 2;
  s.channels = 48;
  s.filters = 128;
  s.height = s.width = 27;
  s.kernel_h = s.kernel_w = 5;
  s.pad_h = s.pad_w = 2;
  s.out_h = s.out_w = 27;
  EXPECT_FALSE(conv_supports(ConvAlgorithm::kWinogradFused, s));
  EXPECT_TRUE(conv_supports(ConvAlgorithm::kFft, s));
  const ConvEstimate best = estimate_conv(v100(), s);
  EXPECT_EQ(best.algorithm, ConvAlgorithm::kFft);
  EXPECT_GE(best.kernels, 4);  // + a reduction if its products split K
  EXPECT_LT(best.seconds, estimate_conv_with(v100(), s, ConvAlgorithm::kImplicitGemm).seconds);
}

TEST(ConvAlgorithm, OneByOneAndLargePlanesAreImplicitGemm) {
  ConvShape s = vgg_block();
  s.kernel_h = s.kernel_w = 1;
  s.pad_h = s.pad_w = 0;
  EXPECT_FALSE(conv_supports(ConvAlgorithm::kFft, s));
  EXPECT_FALSE(conv_supports(ConvAlgorithm::kWinogradFused, s));
  ConvShape wide = vgg_block();
  wide.height = wide.width = wide.out_h = wide.out_w = 300;  // 302 padded: past cuDNN FFT's 256
  EXPECT_FALSE(conv_supports(ConvAlgorithm::kFft, wide));
  EXPECT_TRUE(conv_supports(ConvAlgorithm::kWinogradFused, wide));
}

}  // namespace
}  // namespace conv_algorithm_test
}  // namespace splitscope
