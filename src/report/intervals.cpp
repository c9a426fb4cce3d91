#include "report/intervals.hpp"

#include <algorithm>

namespace splitscope {

IntervalSet::IntervalSet(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return !(i.end > i.start); });
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  for (const Interval& interval : intervals) {
    if (!intervals_.empty() && interval.start <= intervals_.back().end) {
      intervals_.back().end = std::max(intervals_.back().end, interval.end);
    } else {
      intervals_.push_back(interval);
    }
  }
}

void IntervalSet::add(Interval interval) {
  std::vector<Interval> all = intervals_;
  all.push_back(interval);
  *this = IntervalSet(std::move(all));
}

double IntervalSet::length() const {
  double total = 0;
  for (const Interval& interval : intervals_) total += interval.end - interval.start;
  return total;
}

double IntervalSet::overlap(Interval interval) const {
  auto it = std::lower_bound(intervals_.begin(), intervals_.end(), interval.start,
                             [](const Interval& held, double start) { return held.end <= start; });
  double total = 0;
  for (; it != intervals_.end() && it->start < interval.end; ++it) {
    total += std::min(it->end, interval.end) - std::max(it->start, interval.start);
  }
  return total;
}

IntervalSet IntervalSet::intersect(const IntervalSet& a, const IntervalSet& b) {
  // Both lists are sorted and disjoint: one merge-like sweep.
  std::vector<Interval> out;
  size_t i = 0;
  size_t j = 0;
  while (i < a.intervals_.size() && j < b.intervals_.size()) {
    const Interval& x = a.intervals_[i];
    const Interval& y = b.intervals_[j];
    const double start = std::max(x.start, y.start);
    const double end = std::min(x.end, y.end);
    if (end > start) out.push_back({start, end});
    if (x.end < y.end) {
      ++i;
    } else {
      ++j;
    }
  }
  IntervalSet result;
  result.intervals_ = std::move(out);
  return result;
}

IntervalSet IntervalSet::unite(const IntervalSet& a, const IntervalSet& b) {
  std::vector<Interval> all = a.intervals_;
  all.insert(all.end(), b.intervals_.begin(), b.intervals_.end());
  return IntervalSet(std::move(all));
}

}  // namespace splitscope
