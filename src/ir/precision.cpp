#include "ir/precision.hpp"

#include "util/errors.hpp"

namespace splitscope {

StorageBytes storage_bytes(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
    case Precision::kTf32: return StorageBytes{};
    case Precision::kBf16:
    case Precision::kFp16: return StorageBytes{2, 2, 2, 0, 2};
    case Precision::kAmp: return StorageBytes{2, 2, 2, 4, 4};
  }
  return StorageBytes{};
}

std::string_view matrix_math_of(Precision precision) {
  switch (precision) {
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kBf16:
    case Precision::kAmp: return "bf16";
    case Precision::kFp16: return "fp16";
  }
  return "fp32";
}

std::string_view to_string(Precision precision) {
  switch (precision) {
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kAmp: return "amp";
  }
  return "fp32";
}

Precision parse_precision(const std::string& text, const std::string& option) {
  for (Precision precision : {Precision::kFp32, Precision::kTf32, Precision::kBf16, Precision::kFp16, Precision::kAmp}) {
    if (text == to_string(precision)) return precision;
  }
  throw InputError(option, "", "unknown precision '" + text + "'; use fp32, tf32, bf16, fp16 or amp");
}

}  // namespace splitscope
