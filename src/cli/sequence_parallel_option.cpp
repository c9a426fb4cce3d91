#include "cli/sequence_parallel_option.hpp"

namespace splitscope::cli {

CLI::Option* add_sequence_parallel_option(CLI::App& command, bool& given) {
  return command.add_flag("--sequence-parallel", given,
                          "tensor, hybrid on a transformer: each device of a tensor group runs the layer norms and "
                          "residual adds on its share of the sequence, with reduce-scatters and all-gathers in place "
                          "of the all-reduces (Megatron-LM's)");
}

}  // namespace splitscope::cli
