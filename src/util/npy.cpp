#include "util/npy.hpp"

#include <cstring>
#include <numeric>

#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

std::string shape_tuple(const std::vector<int64_t>& shape) {
  std::string tuple = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    tuple += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) tuple += ",";
    if (i + 1 < shape.size()) tuple += " ";
  }
  return tuple + ")";
}

int64_t element_count(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

}  // namespace

std::string encode_npy(const std::vector<int64_t>& shape, const std::vector<float>& data) {
  SPLITSCOPE_CHECK(element_count(shape) == static_cast<int64_t>(data.size()),
                   "npy shape does not match the data size");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_tuple(shape) + ", }";
  // The whole preamble (magic, version, length, header, newline) is padded to
  // a multiple of 64 bytes, as numpy itself writes it.
  const size_t preamble = kMagicSize + 2 + 2;
  size_t total = preamble + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');

  std::string bytes(kMagic, kMagicSize);
  bytes.push_back('\x01');
  bytes.push_back('\x00');
  const uint16_t length = static_cast<uint16_t>(header.size());
  bytes.push_back(static_cast<char>(length & 0xff));
  bytes.push_back(static_cast<char>(length >> 8));
  bytes += header;
  const size_t offset = bytes.size();
  bytes.resize(offset + data.size() * sizeof(float));
  if (!data.empty()) std::memcpy(bytes.data() + offset, data.data(), data.size() * sizeof(float));
  return bytes;
}

NpyArray decode_npy(const std::string& bytes, const std::string& source) {
  if (bytes.size() < 10 || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0) {
    throw InputError(source, "", "not a .npy file (no \\x93NUMPY magic)");
  }
  const size_t length = static_cast<unsigned char>(bytes[8]) |
                        (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  if (bytes.size() < 10 + length) throw InputError(source, "", "truncated .npy header");
  const std::string header = bytes.substr(10, length);
  if (header.find("'<f4'") == std::string::npos) {
    throw InputError(source, "descr", "only little-endian float32 ('<f4') is supported");
  }
  if (header.find("'fortran_order': False") == std::string::npos) {
    throw InputError(source, "fortran_order", "only C order is supported");
  }
  const size_t open = header.find('(');
  const size_t close = header.find(')', open);
  if (open == std::string::npos || close == std::string::npos) {
    throw InputError(source, "shape", "no shape tuple in the header");
  }
  NpyArray array;
  std::string inner = header.substr(open + 1, close - open - 1);
  size_t pos = 0;
  while (pos < inner.size()) {
    size_t comma = inner.find(',', pos);
    std::string item = inner.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.find_first_not_of(' ') != std::string::npos) array.shape.push_back(std::stoll(item));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  const size_t offset = 10 + length;
  const int64_t count = element_count(array.shape);
  if (bytes.size() - offset != static_cast<size_t>(count) * sizeof(float)) {
    throw InputError(source, "", "data size does not match the shape " + shape_tuple(array.shape));
  }
  array.data.resize(static_cast<size_t>(count));
  if (count > 0) std::memcpy(array.data.data(), bytes.data() + offset, array.data.size() * sizeof(float));
  return array;
}

}  // namespace splitscope
