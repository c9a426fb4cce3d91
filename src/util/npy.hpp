#pragma once
/// \file
/// NumPy .npy files (format version 1.0, little-endian float32, C order): the
/// format `run --save-output` writes, readable by numpy.load as it is.

#include <cstdint>
#include <string>
#include <vector>

namespace splitscope {

/// The bytes of a .npy file holding `data` with the given shape.
std::string encode_npy(const std::vector<int64_t>& shape, const std::vector<float>& data);

/// A decoded .npy file.
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// Decodes what encode_npy writes (float32, C order). Throws InputError on
/// anything else; `source` names the file in that message.
NpyArray decode_npy(const std::string& bytes, const std::string& source);

}  // namespace splitscope
