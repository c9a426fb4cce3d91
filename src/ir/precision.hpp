#pragma once
/// \file
/// The precision a network trains or runs at, as data: how many bytes each
/// class of tensor takes in device memory (activations, the weights the
/// products read, gradients, fp32 master weights, the optimizer's state) and
/// which math the products run on. A Plan carries one (Plan::precision), so
/// its memory, transfers and collectives count the bytes it stores, and the
/// simulator prices its products on the matching units (docs/precision.md).

#include <cstdint>
#include <string>
#include <string_view>

namespace splitscope {

enum class Precision : uint8_t {
  kFp32,  ///< float32 storage, products on the CUDA cores
  kTf32,  ///< float32 storage, products on TF32 tensor cores
  kBf16,  ///< pure bfloat16: every tensor (optimizer state included) stored in 2 bytes
  kFp16,  ///< pure float16, likewise
  /// Mixed precision with fp32 master weights (Micikevicius et al. 2018, the
  /// layout ZeRO counts as 16 bytes per Adam parameter): bf16 activations,
  /// gradients and a bf16 copy of the weights the products read; fp32 master
  /// weights and optimizer state; each step casts the updated masters to the
  /// bf16 copy. bf16, not fp16: it needs no loss scaling (its exponent is
  /// float32's), and the datasheets of A100, H100 and H200 give it the fp16 rate.
  kAmp,
};

/// Bytes per element of each tensor class.
struct StorageBytes {
  int64_t activation = 4;  ///< activations and their gradients, network inputs and outputs
  int64_t weight = 4;      ///< the weights the products read (amp: the half copy)
  int64_t gradient = 4;    ///< weight gradients (what the gradient all-reduce moves)
  int64_t master = 0;      ///< fp32 master weights beside the copy (amp), 0 where the weights are the masters
  int64_t optimizer_state = 4;  ///< each optimizer state value (momentum, Adam's moments)

  /// Whether the weights the update writes are cast to a copy each step (amp).
  bool casts_weights() const { return master > 0; }
};

StorageBytes storage_bytes(Precision precision);
/// Which machine-file `peak_tflops` entry prices its products: "fp32",
/// "tf32", "bf16" or "fp16" (amp: "bf16").
std::string_view matrix_math_of(Precision precision);
/// "fp32", "tf32", "bf16", "fp16", "amp"
std::string_view to_string(Precision precision);
/// Parses `--precision fp32|tf32|bf16|fp16|amp`; InputError (exit 2) naming `option` otherwise.
Precision parse_precision(const std::string& text, const std::string& option = "--precision");

}  // namespace splitscope
