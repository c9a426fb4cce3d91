#pragma once
// A network of one GPT block as the transformer tests split it: token
// embedding with positions, width 16, pre-LN attention of 4 causal heads,
// an MLP of 64, then (with `lm_head`) the final layer norm and an LM head
// to the vocabulary without bias. Small enough to run and check by hand.

#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace splitscope::test_networks {

inline std::string gpt_block_network(const std::string& name, int64_t batch, int64_t tokens, int64_t vocab,
                                     bool lm_head) {
  const std::string head = lm_head ? fmt::format(R"(,
    {{"type": "layer_norm", "name": "ln_f"}},
    {{"type": "linear", "name": "lm_head", "units": {}, "bias": false}})",
                                                 vocab)
                                   : "";
  return fmt::format(R"({{"name": "{}", "batch": {}, "input": [{}], "layers": [
    {{"type": "embedding", "name": "wte", "vocab": {}, "features": 16, "positions": true}},
    {{"type": "layer_norm", "name": "ln_1"}},
    {{"type": "linear", "name": "qkv", "units": 48}},
    {{"type": "attention", "name": "attn", "heads": 4, "causal": true}},
    {{"type": "linear", "name": "proj", "units": 16}},
    {{"type": "add", "name": "attn_add", "inputs": ["wte", "proj"]}},
    {{"type": "layer_norm", "name": "ln_2"}},
    {{"type": "linear", "name": "fc", "units": 64}},
    {{"type": "gelu", "name": "gelu"}},
    {{"type": "linear", "name": "mlp_proj", "units": 16}},
    {{"type": "add", "name": "mlp_add", "inputs": ["attn_add", "mlp_proj"]}}{}]}})",
                     name, batch, tokens, vocab, head);
}

}  // namespace splitscope::test_networks
