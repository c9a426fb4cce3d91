#pragma once
/// \file
/// What a matrix product costs on a GPU by its shape, per NVIDIA's "Matrix
/// Multiplication Background User's Guide" (DU-09799-001, sections 2.1, 2.3
/// and 3): cuBLAS computes C[M, N] = A[M, K] · B[K, N] in thread-block tiles
/// of Mt × Nt outputs, one tile per SM at a time, each tile running the whole
/// K loop; the typical cuBLAS tiles are 256×128, 128×256, 128×128, 256×64,
/// 64×256, 128×64, 64×128 and 64×64 (section 2.3).
///
/// - Tile quantization (3.1): a tile is computed whole even where it hangs
///   over the matrix's edge, so a product costs ceil(M/Mt)·ceil(N/Nt) whole
///   tiles: a 16-row product in 64-row tiles does 4× its FLOPs.
/// - Wave quantization (3.2): the tiles run in waves of one per SM; the last
///   wave, however few tiles it holds, takes as long as a full one:
///
///     compute = ceil(tiles / SMs) · 2·Mt·Nt·K / (peak / SMs)
///
/// - Memory (2, "math and memory bounds"): a product moves at least A, B and
///   C once: 4·(M·K + K·N + M·N) bytes for float32 storage, at the achieved
///   DRAM rate (device_facts.hpp); small-M products (a batch of 16 rows
///   against a large weight matrix) are bound by that.
///
/// - Split-K (CUTLASS's examples/06_splitK_gemm and
///   device/gemm_splitk_parallel.h; cuBLAS's splitKreduce kernel): when M·N
///   has too few tiles to fill the SMs and K is long, the K loop is cut into
///   S slices, S times the tiles each of K/S, whose partial products a second
///   kernel sums: it reads S partial C matrices written by the first and
///   writes C, 4·M·N·2S bytes at the DRAM rate, plus its launch.
///
///   seconds = min over tiles and S in {1, 2, 4, 8, 16} of
///             max(compute, memory) + (S > 1 ? reduction + launch : 0)
///
/// The best tile and split are what cuBLAS's heuristics exist to find; on a
/// tie the larger tile and the smaller split. `batch` independent products
/// of one shape (a grouped convolution's groups, Winograd's α² products, an
/// FFT's frequencies) share the waves: their tiles are counted together.
/// Not modelled: several tiles per SM at once, which would make small
/// products faster than this.

#include <array>
#include <cstdint>

#include "sim/machine/device_facts.hpp"

namespace splitscope {

struct TileShape {
  int64_t m = 0;
  int64_t n = 0;
};

/// The K splits tried.
inline constexpr std::array<int64_t, 5> kSplitK{{1, 2, 4, 8, 16}};

/// The guide's typical cuBLAS tiles, largest (most efficient) first.
inline constexpr std::array<TileShape, 8> kCublasTiles{
    {{256, 128}, {128, 256}, {128, 128}, {256, 64}, {64, 256}, {128, 64}, {64, 128}, {64, 64}}};

/// `batch` products C[m, n] = A[m, k] · B[k, n] of one shape.
struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;
};

/// Bytes of A, B and C of every product of `shape`, at `element_bytes` a value.
int64_t gemm_bytes(const GemmShape& shape, int64_t element_bytes = 4);

struct GemmEstimate {
  TileShape tile;               ///< the tile picked
  int64_t split_k = 1;          ///< the K slices
  int64_t tiles = 0;            ///< tiles of all the products (and slices)
  int64_t waves = 0;            ///< ceil(tiles / SMs)
  double compute_seconds = 0;   ///< waves · one tile's time on one SM
  double memory_seconds = 0;    ///< bytes / achieved DRAM rate
  double reduce_seconds = 0;    ///< split-K's reduction kernel, its launch included; 0 without a split
  int kernels = 1;              ///< 2 with a split
  /// max(compute, memory) + reduce: the product's time without its own
  /// launch (the reduction's launch is in).
  double seconds = 0;
};

/// The compute time of `shape` in `tile` on `facts`' SMs (`flops_per_mac`:
/// 2 for real products, 8 for complex ones).
double tile_wave_seconds(const DeviceFacts& facts, const GemmShape& shape, TileShape tile,
                         double flops_per_mac = 2, int64_t* tiles = nullptr, int64_t* waves = nullptr);

/// The least compute time of `shape` over the tiles, unsplit (a kernel that
/// cannot split K, such as fused Winograd's).
double best_tile_seconds(const DeviceFacts& facts, const GemmShape& shape, double flops_per_mac = 2);

/// The time of `shape` moving `bytes` (gemm_bytes(shape) at facts.element_bytes when negative) at the best tile and split.
GemmEstimate estimate_gemm(const DeviceFacts& facts, const GemmShape& shape, int64_t bytes = -1,
                           double flops_per_mac = 2);

}  // namespace splitscope
