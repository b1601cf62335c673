// Node names as a spec lists them, kept as runs of numbered names (a head, a zero-padded
// number, a tail: "n00001".."n32832" is one run) instead of a string per name. A generated
// GB200 fabric of 1,048,576 GPUs lists 1.5 million names under its trays, racks and rail
// leaves: as strings that was 48 MB written by the reader, read once by the builder and freed,
// which no cache held (at 131,072 GPUs it stayed in the last level); as runs it is a few kB.
#ifndef NVLPLACE_PLACEMENT_MODEL_HOST_NAMES_H_
#define NVLPLACE_PLACEMENT_MODEL_HOST_NAMES_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace nvlplace {

// Appends v to *out in decimal, zero-padded to `width` digits (never cut).
void AppendPadded(std::string* out, uint64_t v, int width);

class HostNames {
 public:
  // `count` names head + AppendPadded(first + i, width) + tail, i = 0..count-1; or, with
  // width < 0, the one name `head`.
  struct Run {
    std::string head;
    std::string tail;
    uint64_t first = 0;
    uint64_t count = 1;
    int width = -1;
  };

  // Reads the names in order; `*it` is a name the iterator holds (valid until it moves),
  // written only when read.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = std::string;
    using difference_type = std::ptrdiff_t;
    using pointer = const std::string*;
    using reference = const std::string&;

    Iterator() = default;
    reference operator*() const { return Name(); }
    pointer operator->() const { return &Name(); }
    // The run the name is in and its number there (meaningful when run().width >= 0):
    // callers that find names by number need not have the name written out.
    const Run& run() const { return (*runs_)[run_]; }
    uint64_t number() const { return run().first + at_; }
    Iterator& operator++();
    Iterator operator++(int) {
      Iterator before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const Iterator& a, const Iterator& b) {
      return a.run_ == b.run_ && a.at_ == b.at_;
    }
    friend bool operator!=(const Iterator& a, const Iterator& b) { return !(a == b); }

   private:
    friend class HostNames;
    Iterator(const std::vector<Run>* runs, size_t run) : runs_(runs), run_(run) {}
    const std::string& Name() const;  // written on first use after each move

    const std::vector<Run>* runs_ = nullptr;
    size_t run_ = 0;
    uint64_t at_ = 0;  // the name's place in its run
    mutable std::string name_;
    mutable bool written_ = false;
  };

  using value_type = std::string;
  using const_iterator = Iterator;

  HostNames() = default;
  // A list of names is one: both convert implicitly (specs are written as lists in tests).
  HostNames(std::initializer_list<std::string> names);  // NOLINT(google-explicit-constructor)
  HostNames(const std::vector<std::string>& names);     // NOLINT(google-explicit-constructor)

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() {
    runs_.clear();
    size_ = 0;
  }
  // Adds one name after the others; a name that continues the last run (same head, the next
  // number written as that run writes it) extends it.
  void push_back(absl::string_view name);
  // Adds a run after the others (joined to the last one when it continues it); one of count 0
  // adds nothing.
  void AddRun(Run run);
  void Append(const HostNames& more);

  const std::vector<Run>& runs() const { return runs_; }
  Iterator begin() const { return Iterator(&runs_, 0); }
  Iterator end() const { return Iterator(&runs_, runs_.size()); }
  std::string front() const { return *begin(); }
  std::string back() const { return (*this)[size_ - 1]; }
  // The i-th name (i < size()): a walk over the runs.
  std::string operator[](size_t i) const;
  std::vector<std::string> Expand() const;
  // The names as a Slurm hostlist expression (CompressHostlist of them).
  std::string Hostlist() const;

  // The same names in the same order, however they are cut into runs.
  friend bool operator==(const HostNames& a, const HostNames& b);
  friend bool operator!=(const HostNames& a, const HostNames& b) { return !(a == b); }

 private:
  std::vector<Run> runs_;
  size_t size_ = 0;
};

// Test messages: the names as a hostlist.
std::ostream& operator<<(std::ostream& os, const HostNames& names);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_MODEL_HOST_NAMES_H_
