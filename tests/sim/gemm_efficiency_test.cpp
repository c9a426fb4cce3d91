// The GEMM rule (sim/costs/gemm_efficiency.hpp): tile and wave quantization on the
// device's SMs, and the memory bound of small-M products, against numbers
// worked out by hand.

#include "sim/costs/gemm_efficiency.hpp"

#include <gtest/gtest.h>

#include "rule_devices.hpp"

namespace splitscope {
namespace gemm_efficiency_test {
namespace {

using testing::a100;
using testing::v100;
using testing::v100_fp16;

TEST(GemmEfficiency, WaveQuantizationOfA4096SquareIn128x128TilesOn108Sms) {
  // (4096/128)² = 1024 tiles on 108 SMs: 9.48 waves run as 10. One tile is
  // 2·128·128·4096 = 134,217,728 FLOPs on one SM's 19.5e12/108 FLOP/s:
  // 743.36 µs; ten waves 7.4336 ms, against 2·4096³/19.5e12 = 7.0482 ms at
  // the peak: 94.8% of it.
  int64_t tiles = 0;
  int64_t waves = 0;
  const double seconds = tile_wave_seconds(a100(), {4096, 4096, 4096, 1}, {128, 128}, 2, &tiles, &waves);
  EXPECT_EQ(tiles, 1024);
  EXPECT_EQ(waves, 10);
  EXPECT_NEAR(seconds, 10 * 134217728.0 / (19.5e12 / 108), 1e-12);
  EXPECT_NEAR(2.0 * 4096 * 4096 * 4096 / 19.5e12 / seconds, 0.948, 5e-4);
}

TEST(GemmEfficiency, TheBestTileFillsTheLastWave) {
  // Over the guide's tiles: 256×128, 128×256, 128×128, 256×64 and 64×256 all
  // take 10 waves' worth (e.g. 512 tiles of 256×128 in 5 waves of twice the
  // work); 128×64 gives 2048 tiles in 19 waves (18.96), 64×64 4096 in 38
  // (37.93): the same 19 · 2·128·64·4096 FLOPs per SM, 7.0619 ms. On the tie
  // the larger tile, 128×64, is kept. Memory: 4·3·4096² B / (0.9 · 2039e9) =
  // 109.7 µs, far below.
  const GemmEstimate gemm = estimate_gemm(a100(), {4096, 4096, 4096, 1});
  EXPECT_EQ(gemm.tile.m, 128);
  EXPECT_EQ(gemm.tile.n, 64);
  EXPECT_EQ(gemm.waves, 19);
  EXPECT_NEAR(gemm.compute_seconds, 19 * 2.0 * 128 * 64 * 4096 / (19.5e12 / 108), 1e-12);
  EXPECT_NEAR(gemm.memory_seconds, 4.0 * 3 * 4096 * 4096 / (0.9 * 2039e9), 1e-12);
  EXPECT_DOUBLE_EQ(gemm.seconds, gemm.compute_seconds);
}

TEST(GemmEfficiency, A16RowProductInFp32PaysForWholeTilesAndSplitsK) {
  // 16 × 4096 × 4096 on a V100's CUDA cores: every tile is at least 64 rows,
  // so the product does 4× its FLOPs. Unsplit, 64×64 tiles: 64 of them, one
  // wave on 80 SMs, each 2·64·64·4096 = 33,554,432 FLOPs at 15.7e12/80 =
  // 196.25e9 FLOP/s: 170.98 µs. Its bytes, 4·(16·4096 + 4096² + 16·4096) =
  // 67,633,152 at 810e9 B/s, take 83.50 µs: tile quantization, not memory,
  // bounds it. Split 16 ways, the 1024 tiles of K = 256 run in 13 waves
  // (12.8) of 2·64·64·256 / 196.25e9 = 10.686 µs: 138.92 µs; the reduction
  // reads and writes 4·16·4096·2·16 = 8,388,608 bytes (10.36 µs) after a
  // 5 µs launch: 154.28 µs, the best of every tile and split.
  const GemmEstimate gemm = estimate_gemm(v100(), {16, 4096, 4096, 1});
  EXPECT_EQ(gemm.tile.m, 64);
  EXPECT_EQ(gemm.tile.n, 64);
  EXPECT_EQ(gemm.split_k, 16);
  EXPECT_EQ(gemm.kernels, 2);
  EXPECT_EQ(gemm.tiles, 1024);
  EXPECT_EQ(gemm.waves, 13);
  EXPECT_NEAR(gemm.compute_seconds, 13 * 2.0 * 64 * 64 * 256 / 196.25e9, 1e-12);
  EXPECT_NEAR(gemm.memory_seconds, 67633152.0 / 810e9, 1e-12);
  EXPECT_NEAR(gemm.reduce_seconds, 8388608.0 / 810e9 + 5e-6, 1e-12);
  EXPECT_NEAR(gemm.seconds, 154.28e-6, 0.01e-6);
  // Unsplit it would be the one wave of whole-K tiles.
  EXPECT_NEAR(best_tile_seconds(v100(), {16, 4096, 4096, 1}), 33554432.0 / 196.25e9, 1e-12);
}

TEST(GemmEfficiency, A16RowProductOnTensorCoresIsMemoryBound) {
  // The same product with the fp16 tensor cores pricing it (125 TFLOP/s,
  // 1.5625e12 per SM): 64 tiles of 128×64 in one wave take 2·128·64·4096 /
  // 1.5625e12 = 42.95 µs, and the 67,633,152 bytes at 810e9 B/s 83.50 µs:
  // memory bound, no split.
  const GemmEstimate gemm = estimate_gemm(v100_fp16(), {16, 4096, 4096, 1});
  EXPECT_LT(gemm.compute_seconds, gemm.memory_seconds);
  EXPECT_EQ(gemm.split_k, 1);
  EXPECT_NEAR(gemm.seconds, 67633152.0 / 810e9, 1e-12);
  EXPECT_DOUBLE_EQ(gemm.seconds, gemm.memory_seconds);
}

TEST(GemmEfficiency, AFullMachineIsNotSplit) {
  // 4096³ on the A100 fills 19 waves already: a split only adds its reduction.
  EXPECT_EQ(estimate_gemm(a100(), {4096, 4096, 4096, 1}).split_k, 1);
  EXPECT_EQ(estimate_gemm(a100(), {4096, 4096, 4096, 1}).kernels, 1);
}

TEST(GemmEfficiency, BatchedProductsShareTheWaves) {
  // 16 products of 64×64×64 are 16 tiles of 64×64: one wave, as fast as one
  // product; 81 of them need a second wave on 80 SMs.
  const GemmShape one{64, 64, 64, 1};
  const double single = tile_wave_seconds(v100(), one, {64, 64});
  EXPECT_DOUBLE_EQ(tile_wave_seconds(v100(), {64, 64, 64, 16}, {64, 64}), single);
  EXPECT_DOUBLE_EQ(tile_wave_seconds(v100(), {64, 64, 64, 81}, {64, 64}), 2 * single);
  EXPECT_EQ(gemm_bytes({64, 64, 64, 16}), 16 * 4 * 3 * 64 * 64);
}

TEST(GemmEfficiency, ComplexProductsCostEightFlopsAMultiplyAdd) {
  EXPECT_DOUBLE_EQ(tile_wave_seconds(v100(), {64, 64, 64, 1}, {64, 64}, 8),
                   4 * tile_wave_seconds(v100(), {64, 64, 64, 1}, {64, 64}));
}

}  // namespace
}  // namespace gemm_efficiency_test
}  // namespace splitscope
