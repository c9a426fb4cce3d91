#include "ir/feature_cut.hpp"

namespace splitscope {

std::string FeatureCut::to_string() const {
  if (whole()) return "";
  return " features " + range.to_string() + (blocks > 1 ? "x" + std::to_string(blocks) : "") + (rows ? " rows" : "");
}

FeatureCut feature_cut(Range range, int blocks, int64_t axis) {
  FeatureCut cut;
  if (range.begin == 0 && range.end * blocks == axis) return cut;
  cut.range = range;
  cut.blocks = blocks;
  return cut;
}

}  // namespace splitscope
