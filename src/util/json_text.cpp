#include "util/json_text.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "util/errors.hpp"
#include "util/json_fields.hpp"

namespace splitscope {

using nlohmann::json;

namespace {

// nlohmann prefixes "[json.exception.parse_error.101] "; the rest is the useful part.
std::string without_prefix(const std::string& what) {
  const auto bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

/// Builds the document like json::parse, and knows where the parser is, as a
/// JSON path ("layers[3].units"), and the keys seen in each open object, so
/// that a number past double's range and a repeated key are reported at their
/// field. A SAX handler around nlohmann's DOM builder: its callback parser
/// would do, but rescans the enclosing array at every object's end (200,000
/// layers took a minute).
class PositionedParser {
 public:
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  PositionedParser(json& result, std::string source) : dom_(result, true), source_(std::move(source)) {}

  bool null() { return value(dom_.null()); }
  bool boolean(bool b) { return value(dom_.boolean(b)); }
  bool number_integer(json::number_integer_t n) { return value(dom_.number_integer(n)); }
  bool number_unsigned(json::number_unsigned_t n) { return value(dom_.number_unsigned(n)); }
  bool number_float(json::number_float_t n, const string_t& text) { return value(dom_.number_float(n, text)); }
  bool string(string_t& text) { return value(dom_.string(text)); }
  bool binary(binary_t& bytes) { return value(dom_.binary(bytes)); }
  bool start_object(std::size_t size) {
    frames_.push_back({false, {}, 0, {}});
    return dom_.start_object(size);
  }
  bool key(string_t& name) {
    Frame& frame = frames_.back();
    frame.key = name;
    if (!frame.keys.insert(name).second) {
      // nlohmann keeps the last; a hand-edited file that says it twice means one of them by mistake.
      throw InputError(source_, path(), "appears twice in the same object; keep one");
    }
    return dom_.key(name);
  }
  bool end_object() {
    frames_.pop_back();
    return value(dom_.end_object());
  }
  bool start_array(std::size_t size) {
    frames_.push_back({true, {}, 0, {}});
    return dom_.start_array(size);
  }
  bool end_array() {
    frames_.pop_back();
    return value(dom_.end_array());
  }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& error) {
    if (error.id == 406) {
      // "number overflow parsing '1e999'": past double's range.
      throw InputError(source_, path(), "'" + token + "' is too large a number (past about 1.8e308)");
    }
    return dom_.parse_error(position, token, error);  // throws it, handled by parse_json_text
  }

 private:
  struct Frame {
    bool array = false;
    std::string key;
    size_t index = 0;
    std::set<std::string> keys;
  };

  /// A value of the innermost array is done: the next one has the next index.
  bool value(bool keep_going) {
    if (!frames_.empty() && frames_.back().array) frames_.back().index += 1;
    return keep_going;
  }

  /// The path of the value being read: each open object's last key, each open array's index.
  std::string path() const {
    std::string text;
    for (const Frame& frame : frames_) {
      if (frame.array) {
        text += "[" + std::to_string(frame.index) + "]";
      } else if (!frame.key.empty()) {
        text = JsonFields(json(), text, source_).path_of(frame.key);
      }
    }
    return text;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::string source_;
  std::vector<Frame> frames_;
};

}  // namespace

json parse_json_text(std::string_view text, const std::string& source) {
  json result;
  PositionedParser parser(result, source);
  try {
    json::sax_parse(text, &parser);
  } catch (const json::exception& error) {
    throw InputError(source, "", "not valid JSON: " + without_prefix(error.what()));
  }
  return result;
}

std::string read_input_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw InputError(path, "", "is a folder; give a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", std::string("cannot open the file: ") + std::strerror(errno));
  // Read up to one byte past the cap: /dev/zero or a runaway pipe has no size
  // to ask for beforehand, and must not fill the memory.
  // The chunk is left uninitialised: zeroing 1 MiB for every file read was a
  // tenth of the cli fuzz target's time (every command reads its network and machine).
  constexpr size_t kChunkBytes = size_t{1} << 16;
  std::string text;
  const auto chunk = std::make_unique_for_overwrite<char[]>(kChunkBytes);
  while (in && text.size() <= kMaxInputFileBytes) {
    in.read(chunk.get(), static_cast<std::streamsize>(kChunkBytes));
    text.append(chunk.get(), static_cast<size_t>(in.gcount()));
  }
  if (text.size() > kMaxInputFileBytes) {
    throw InputError(path, "",
                     fmt::format("is larger than {} MiB, the most splitscope reads from an input file; is it the "
                                 "right file?",
                                 kMaxInputFileBytes >> 20));
  }
  if (in.bad()) throw InputError(path, "", std::string("reading the file failed: ") + std::strerror(errno));
  return text;
}

}  // namespace splitscope
