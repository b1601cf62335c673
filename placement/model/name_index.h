// Records of a vector found by name: a hash set of their ids that reads each name from its
// record. A slot is 4 bytes, not a 16-byte view and an id (or a copy of the name): the index
// of a 1M-GPU model's 262,144 trays is 2.5 MB instead of 13 MB, and mostly stays in cache
// while it is filled. The records may move (the vector grow); the vector itself must outlive
// the index and stay where it is (Topology is neither copied nor moved).
#ifndef NVLPLACE_PLACEMENT_MODEL_NAME_INDEX_H_
#define NVLPLACE_PLACEMENT_MODEL_NAME_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace nvlplace {

// Record has a `name` (std::string); ids are indexes into the vector.
template <typename Record>
class NameIndex {
 public:
  explicit NameIndex(const std::vector<Record>* records) : ids_(0, Hash{records}, Eq{records}) {}
  NameIndex(const NameIndex&) = delete;
  NameIndex& operator=(const NameIndex&) = delete;

  void reserve(size_t n) { ids_.reserve(n); }
  size_t size() const { return ids_.size(); }

  // Indexes record `id` by its name: -1, or the id that already has that name (then `id`
  // is not indexed).
  int32_t Insert(int32_t id) {
    auto [it, inserted] = ids_.insert(id);
    return inserted ? -1 : *it;
  }
  // The id of the record named `name`, or -1.
  int32_t Find(absl::string_view name) const {
    auto it = ids_.find(name);
    return it == ids_.end() ? -1 : *it;
  }

 private:
  // An id stands for its record's name: ids hash and compare as names do, and a name looks
  // up its id without a record to compare with (transparent).
  struct Hash {
    using is_transparent = void;
    const std::vector<Record>* records;
    size_t operator()(absl::string_view name) const {
      return absl::Hash<absl::string_view>()(name);
    }
    size_t operator()(int32_t id) const { return (*this)(Name(records, id)); }
  };
  struct Eq {
    using is_transparent = void;
    const std::vector<Record>* records;
    bool operator()(int32_t a, int32_t b) const {
      return a == b || Name(records, a) == Name(records, b);
    }
    bool operator()(int32_t a, absl::string_view b) const { return Name(records, a) == b; }
    bool operator()(absl::string_view a, int32_t b) const { return a == Name(records, b); }
  };
  static absl::string_view Name(const std::vector<Record>* records, int32_t id) {
    return (*records)[static_cast<size_t>(id)].name;
  }

  absl::flat_hash_set<int32_t, Hash, Eq> ids_;
};

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_MODEL_NAME_INDEX_H_
