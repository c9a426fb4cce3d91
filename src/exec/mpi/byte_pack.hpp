#pragma once
/// \file
/// Records packed into bytes and read back, for gathering what each rank
/// recorded into one message (all ranks run the same build on the same kind
/// of host, so values go as their bytes). No MPI here.

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "util/check.hpp"

namespace splitscope {

class BytePacker {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* from = reinterpret_cast<const char*>(&value);
    bytes_.insert(bytes_.end(), from, from + sizeof(T));
  }
  template <typename T>
  void put_vector(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>);
    put(static_cast<int64_t>(values.size()));
    const auto* from = reinterpret_cast<const char*>(values.data());
    bytes_.insert(bytes_.end(), from, from + values.size() * sizeof(T));
  }
  void put_string(const std::string& text) { put_vector(std::vector<char>(text.begin(), text.end())); }

  const std::vector<char>& bytes() const { return bytes_; }

 private:
  std::vector<char> bytes_;
};

class ByteReader {
 public:
  ByteReader(const char* data, size_t size) : at_(data), end_(data + size) {}

  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    take(&value, sizeof(T));
    return value;
  }
  template <typename T>
  std::vector<T> get_vector() {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto count = get<int64_t>();
    SPLITSCOPE_CHECK(count >= 0, "a packed record with a negative length");
    std::vector<T> values(static_cast<size_t>(count));
    take(values.data(), values.size() * sizeof(T));
    return values;
  }
  std::string get_string() {
    const std::vector<char> chars = get_vector<char>();
    return {chars.begin(), chars.end()};
  }
  bool done() const { return at_ == end_; }

 private:
  void take(void* into, size_t size) {
    SPLITSCOPE_CHECK(static_cast<size_t>(end_ - at_) >= size, "a packed record read past its end");
    std::memcpy(into, at_, size);
    at_ += size;
  }

  const char* at_;
  const char* end_;
};

}  // namespace splitscope
