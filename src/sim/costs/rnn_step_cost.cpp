#include "sim/costs/rnn_step_cost.hpp"

#include <algorithm>

#include "sim/costs/gemm_efficiency.hpp"

namespace splitscope {

CellEstimate estimate_cell_step(const DeviceFacts& facts, const CellShape& s) {
  const int64_t steps = std::max<int64_t>(1, s.steps);
  const int64_t width = s.gates * s.units;
  CellEstimate cell;
  const GemmEstimate input = estimate_gemm(facts, GemmShape{steps * s.rows, width, s.input, 1});
  cell.input_product = (input.seconds + facts.launch_seconds) / static_cast<double>(steps);
  cell.kernels = input.kernels / static_cast<double>(steps) + 1;  // + the gate kernel
  // Every step, the first included: cuDNN runs the same kernels on a zero
  // initial state (hx may be NULL), as the op's FLOP count assumes.
  const GemmEstimate recurrent = estimate_gemm(facts, GemmShape{s.rows, width, s.hidden, 1});
  cell.recurrent_product = recurrent.seconds + facts.launch_seconds;
  cell.kernels += recurrent.kernels;
  const double state_in = s.has_state ? static_cast<double>(s.rows * s.units) : 0.0;
  const double state_out = static_cast<double>(s.rows * s.units) * (s.lstm ? 2 : 1);
  const double products = 2.0;  // the pre-activations of each product
  const double bytes = facts.element_bytes * (products * static_cast<double>(s.rows * width) + static_cast<double>(width) +
                                 state_in + state_out);
  cell.elementwise = bytes / facts.dram_bytes_per_second + facts.launch_seconds;
  cell.seconds = cell.input_product + cell.recurrent_product + cell.elementwise;
  return cell;
}

}  // namespace splitscope
