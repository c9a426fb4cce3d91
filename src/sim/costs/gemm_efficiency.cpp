#include "sim/costs/gemm_efficiency.hpp"

#include <algorithm>

#include "util/ceil_div.hpp"

namespace splitscope {
namespace {

constexpr int64_t kFloat = sizeof(float);


}  // namespace

int64_t gemm_bytes(const GemmShape& shape, int64_t element_bytes) {
  return element_bytes * shape.batch * (shape.m * shape.k + shape.k * shape.n + shape.m * shape.n);
}

double tile_wave_seconds(const DeviceFacts& facts, const GemmShape& shape, TileShape tile, double flops_per_mac,
                         int64_t* tiles, int64_t* waves) {
  const int64_t count = shape.batch * ceil_div(shape.m, tile.m) * ceil_div(shape.n, tile.n);
  const int64_t rounds = ceil_div(count, facts.sm_count);
  if (tiles != nullptr) *tiles = count;
  if (waves != nullptr) *waves = rounds;
  const double tile_flops = flops_per_mac * static_cast<double>(tile.m * tile.n) * static_cast<double>(shape.k);
  return static_cast<double>(rounds) * tile_flops / facts.sm_flops_per_second();
}

double best_tile_seconds(const DeviceFacts& facts, const GemmShape& shape, double flops_per_mac) {
  double best = 0;
  bool first = true;
  for (const TileShape& tile : kCublasTiles) {
    const double seconds = tile_wave_seconds(facts, shape, tile, flops_per_mac);
    if (first || seconds < best) best = seconds;
    first = false;
  }
  return best;
}

GemmEstimate estimate_gemm(const DeviceFacts& facts, const GemmShape& shape, int64_t bytes, double flops_per_mac) {
  GemmEstimate best;
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.batch <= 0) return best;
  const int64_t moved = bytes < 0 ? gemm_bytes(shape, static_cast<int64_t>(facts.element_bytes)) : bytes;
  const double memory = static_cast<double>(moved) / facts.dram_bytes_per_second;
  bool first = true;
  for (const TileShape& tile : kCublasTiles) {
    for (int64_t split : kSplitK) {
      if (split > shape.k) break;
      // S slices of K: S times the tiles, each running ceil(K / S) of the loop.
      const GemmShape sliced{shape.m, shape.n, (shape.k + split - 1) / split, shape.batch * split};
      int64_t tiles = 0;
      int64_t waves = 0;
      const double compute = tile_wave_seconds(facts, sliced, tile, flops_per_mac, &tiles, &waves);
      // Split-K's partial sums are float32 at every storage (cuBLAS accumulates in float32).
      const double partials = static_cast<double>(kFloat * shape.batch * shape.m * shape.n * 2 * split);
      const double reduce = split == 1 ? 0.0 : partials / facts.dram_bytes_per_second + facts.launch_seconds;
      const double seconds = std::max(compute, memory) + reduce;
      if (first || seconds < best.seconds) {
        best.tile = tile;
        best.split_k = split;
        best.tiles = tiles;
        best.waves = waves;
        best.compute_seconds = compute;
        best.reduce_seconds = reduce;
        best.kernels = split == 1 ? 1 : 2;
        best.seconds = seconds;
        first = false;
      }
    }
  }
  best.memory_seconds = memory;
  return best;
}

}  // namespace splitscope
