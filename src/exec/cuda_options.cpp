#include "exec/cuda_backend.hpp"
#include "util/errors.hpp"

namespace splitscope {

LinkMode parse_link_mode(const std::string& text) {
  if (text == "device") return LinkMode::kDevice;
  if (text == "host") return LinkMode::kHost;
  throw InputError("--link", "", "unknown link mode '" + text + "'; use device or host");
}

Dtype parse_dtype(const std::string& text) {
  if (text == "fp32") return Dtype::kFp32;
  if (text == "tf32") return Dtype::kTf32;
  if (text == "bf16") return Dtype::kBf16;
  throw InputError("--dtype", "", "unknown dtype '" + text + "'; use fp32, tf32 or bf16");
}

std::string to_string(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFp32: return "fp32";
    case Dtype::kTf32: return "tf32";
    case Dtype::kBf16: return "bf16";
  }
  return "?";
}

std::string to_string(LinkMode link) { return link == LinkMode::kHost ? "host" : "device"; }

double check_tolerance(Dtype dtype) {
  // fp32: the cpu backend's own bound between strategies (accumulation order
  // differs). TF32 keeps 10 mantissa bits (2^-11 ≈ 5e-4 per rounding) and
  // bf16 keeps 7 (2^-8 ≈ 4e-3); errors grow with depth, hence the margins.
  switch (dtype) {
    case Dtype::kFp32: return 1e-4;
    case Dtype::kTf32: return 1e-2;
    case Dtype::kBf16: return 5e-2;
  }
  return 1e-4;
}

}  // namespace splitscope
