#pragma once
/// \file
/// KeyedLists: ids filed under small dense integer keys, each key's list in
/// the order its ids were appended, with no heap block per key or per list:
/// one head and tail per key and one link per id, in three flat arrays.
/// PlanBuilder files every value of a plan under its tensor this way; a map
/// from key to std::vector<int> made an allocation per tensor and per growth
/// of its list, and freeing them, a fifth of partitioning a 100-layer network.

#include <cstddef>
#include <iterator>
#include <unordered_map>
#include <vector>

namespace splitscope {

class KeyedLists {
 public:
  /// The ids of one key, in append order.
  class List {
   public:
    class Iterator {
     public:
      using iterator_category = std::forward_iterator_tag;
      using value_type = int;
      using difference_type = std::ptrdiff_t;
      using pointer = const int*;
      using reference = int;

      Iterator() = default;
      Iterator(const std::vector<int>* next, int at) : next_(next), at_(at) {}
      int operator*() const { return at_; }
      Iterator& operator++() {
        at_ = (*next_)[static_cast<size_t>(at_)];
        return *this;
      }
      Iterator operator++(int) {
        Iterator before = *this;
        ++*this;
        return before;
      }
      bool operator==(const Iterator& other) const { return at_ == other.at_; }

     private:
      const std::vector<int>* next_ = nullptr;
      int at_ = -1;
    };

    List(const std::vector<int>& next, int first) : next_(&next), first_(first) {}
    Iterator begin() const { return {next_, first_}; }
    Iterator end() const { return {next_, -1}; }
    bool empty() const { return first_ < 0; }
    int front() const { return first_; }

   private:
    const std::vector<int>* next_;
    int first_;
  };

  KeyedLists() = default;
  /// Keys 0 .. keys - 1, every list empty; room for ids below `ids` without growing.
  explicit KeyedLists(size_t keys, size_t ids = 0) : first_(keys, -1), last_(keys, -1) { next_.reserve(ids); }

  /// Appends `id` (>= 0) to the list of `key`. An id belongs to one list at most.
  void append(size_t key, int id) {
    const auto at = static_cast<size_t>(id);
    if (next_.size() <= at) next_.resize(at + 1, -1);
    if (last_[key] < 0) {
      first_[key] = id;
    } else {
      next_[static_cast<size_t>(last_[key])] = id;
    }
    last_[key] = id;
  }

  List operator[](size_t key) const { return {next_, first_[key]}; }

 private:
  std::vector<int> first_;  ///< by key: its first id, -1 for none
  std::vector<int> last_;   ///< by key: its last id, -1 for none
  std::vector<int> next_;   ///< by id: the next id of its key, -1 for the last
};

/// KeyedLists over a key space too large to hold a head per key (a tensor
/// on each of 50,000 devices: 5e9 keys for a 100,000-layer chain), with
/// heads only for the keys in use: the same lists, one hash entry per key
/// that has any.
class SparseKeyedLists {
 public:
  void append(size_t key, int id) {
    const auto at = static_cast<size_t>(id);
    if (next_.size() <= at) next_.resize(at + 1, -1);
    auto [head, inserted] = heads_.try_emplace(key, Head{id, id});
    if (inserted) return;
    next_[static_cast<size_t>(head->second.last)] = id;
    head->second.last = id;
  }

  KeyedLists::List operator[](size_t key) const {
    const auto head = heads_.find(key);
    return {next_, head == heads_.end() ? -1 : head->second.first};
  }

 private:
  struct Head {
    int first = -1;
    int last = -1;
  };
  std::unordered_map<size_t, Head> heads_;
  std::vector<int> next_;  ///< by id: the next id of its key, -1 for the last
};

}  // namespace splitscope
