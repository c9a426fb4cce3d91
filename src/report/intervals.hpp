#pragma once
/// \file
/// Time intervals on one lane or one device, merged, so that busy time is
/// counted once however many spans overlap: the arithmetic under every
/// "compute / transfer / idle / overlap" number a report shows.

#include <vector>

namespace splitscope {

/// A half-open time interval [start, end) in microseconds.
struct Interval {
  double start = 0;
  double end = 0;
  bool operator==(const Interval&) const = default;
};

/// A union of intervals, kept sorted and disjoint.
class IntervalSet {
 public:
  IntervalSet() = default;
  /// Builds the union of `intervals` (any order, overlaps allowed, empty ones dropped).
  explicit IntervalSet(std::vector<Interval> intervals);

  /// Adds one interval (merging it with those it touches).
  void add(Interval interval);
  /// Total length of the union.
  double length() const;
  /// The disjoint, sorted intervals.
  const std::vector<Interval>& intervals() const { return intervals_; }
  /// Length of `interval`'s intersection with the union (a binary search and
  /// the intervals it touches: cheap against a set of a million).
  double overlap(Interval interval) const;

  /// Intersection of two unions.
  static IntervalSet intersect(const IntervalSet& a, const IntervalSet& b);
  /// Union of two unions.
  static IntervalSet unite(const IntervalSet& a, const IntervalSet& b);

 private:
  std::vector<Interval> intervals_;
};

}  // namespace splitscope
