#pragma once
/// \file
/// The counting rules of docs/network-format.md ("Counting"),
/// in one place, so that `inspect`, the graph and every shard agree. Each
/// layer type's own rule is in its definition (ops/layer_def.hpp).
///
/// FLOPs are 2 per multiply-add of the matrix products, for the whole batch;
/// bias adds, activations, pooling and the cells' element-wise math are
/// counted as bytes moved, not FLOPs. A count that does not fit 64 bits
/// throws std::overflow_error (model_limits turns it into an InputError).

#include <cstdint>
#include <initializer_list>

#include "ir/layer.hpp"

namespace splitscope {

/// The product and sum of counts, throwing std::overflow_error past 64 bits
/// (a huge layer must fail loudly rather than wrap around).
int64_t count_product(std::initializer_list<int64_t> factors);
int64_t count_sum(int64_t a, int64_t b);

/// 2·in·out·batch
int64_t dense_flops(int64_t in, int64_t out, int64_t batch);
/// 2·Cout·Hout·Wout·(Cin/groups)·kh·kw·batch
int64_t conv2d_flops(int64_t filters, int64_t out_h, int64_t out_w, int64_t in_per_group,
                     int64_t kernel_h, int64_t kernel_w, int64_t batch);
/// Matrix products of one recurrent cell step: 2·gates·H·(I+H)·batch, with
/// gates = 4 for LSTM and 3 for GRU.
int64_t recurrent_cell_flops(OpKind cell, int64_t input, int64_t hidden, int64_t batch);
/// Gates per cell: 4 (i, f, g, o) for LSTM, 3 (r, z, n) for GRU.
int64_t gate_count(OpKind cell);

/// Parameters of one layer (all stacked cells for a recurrent layer).
int64_t layer_params(const Layer& layer);
/// FLOPs of one layer for the whole batch (all cells and steps for a recurrent one).
int64_t layer_flops(const Layer& layer, int64_t batch);

}  // namespace splitscope
