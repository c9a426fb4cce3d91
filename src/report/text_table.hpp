#pragma once
/// \file
/// A plain-text table with aligned columns, for the terminal and for files:
/// it reads the same piped as on screen.

#include <string>
#include <vector>

namespace splitscope {

class TextTable {
 public:
  enum class Align { kLeft, kRight };

  /// Column headers and their alignment (numbers read best right-aligned).
  TextTable(std::vector<std::string> headers, std::vector<Align> aligns);

  void add_row(std::vector<std::string> cells);
  /// A horizontal rule before the next row (e.g. before totals).
  void add_rule();
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;  ///< an empty row is a rule
};

/// 1234567 -> "1.23 M", with SI prefixes (k, M, G, T, P).
std::string si_count(double value);
/// Bytes with binary prefixes: "1.50 GiB".
std::string binary_bytes(double bytes);

}  // namespace splitscope
