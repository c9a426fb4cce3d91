#include "report/text_table.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <fmt/format.h>

#include "util/check.hpp"
#include "util/strings.hpp"

namespace splitscope {

TextTable::TextTable(std::vector<std::string> headers, std::vector<Align> aligns)
    : headers_(std::move(headers)), aligns_(std::move(aligns)) {
  SPLITSCOPE_CHECK(headers_.size() == aligns_.size(), "one alignment per column");
}

void TextTable::add_row(std::vector<std::string> cells) {
  SPLITSCOPE_CHECK(cells.size() == headers_.size(), "row width differs from the header");
  // Cells carry names read from files: a newline or an escape sequence in one must not reach the terminal.
  for (std::string& cell : cells) cell = printable(cell);
  rows_.push_back(std::move(cells));
}

void TextTable::add_rule() { rows_.emplace_back(); }

std::string TextTable::render() const {
  std::vector<size_t> widths(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) widths[c] = headers_[c].size();
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) text += "  ";
      const size_t pad = widths[c] - cells[c].size();
      const bool last = c + 1 == cells.size();
      if (aligns_[c] == Align::kRight) {
        text += std::string(pad, ' ') + cells[c];
      } else {
        text += cells[c];
        if (!last) text += std::string(pad, ' ');
      }
    }
    return text + "\n";
  };
  size_t total = 0;
  for (size_t w : widths) total += w;
  total += 2 * (widths.empty() ? 0 : widths.size() - 1);
  // A last, left-aligned column is free text (a verdict's reason, hundreds of
  // characters): the rule stops with its heading rather than run that long.
  if (!widths.empty() && aligns_.back() == Align::kLeft) total -= widths.back() - headers_.back().size();
  const std::string rule = std::string(total, '-') + "\n";
  std::string text = line(headers_) + rule;
  for (const auto& row : rows_) text += row.empty() ? rule : line(row);
  return text;
}

namespace {

// `value` divided by `base` until it is below it, with the unit of that
// power; whole numbers while unscaled, two decimals after.
std::string with_prefix(double value, double base, const std::array<const char*, 6>& units) {
  size_t index = 0;
  double scaled = value;
  while (std::fabs(scaled) >= base && index + 1 < units.size()) {
    scaled /= base;
    ++index;
  }
  const std::string_view unit = units[index];
  return fmt::format("{:.{}f}{}{}", scaled, index == 0 ? 0 : 2, unit.empty() ? "" : " ", unit);
}

}  // namespace

std::string si_count(double value) {
  static constexpr std::array<const char*, 6> kPrefixes{"", "k", "M", "G", "T", "P"};
  return with_prefix(value, 1000.0, kPrefixes);
}

std::string binary_bytes(double bytes) {
  static constexpr std::array<const char*, 6> kPrefixes{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  return with_prefix(bytes, 1024.0, kPrefixes);
}

}  // namespace splitscope
