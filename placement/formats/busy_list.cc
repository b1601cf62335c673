// The busy-list format: which GPUs are taken, as hostlists and index ranges.
#include "placement/formats/busy_list.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "placement/model/hostlist.h"
#include "placement/model/limits.h"

namespace nvlplace {

namespace {

// The GPU indexes of one busy-list line ("0-3,6"), parsed once for all its nodes: a bitmap of
// the indexes below limits::kMaxGpusPerNode, and for the check against each node's GPU count
// the items in order with the running maximum of their upper ends.
struct IndexSet {
  static constexpr int kWords = (limits::kMaxGpusPerNode + 63) / 64;
  uint64_t bits[kWords] = {};
  std::vector<absl::string_view> items;
  std::vector<int64_t> max_hi;  // max_hi[i]: the largest upper end of items[0..i]
};

// A GPU index: 1 to 9 digits (no sign), spaces around it allowed.
bool ParseIndex(absl::string_view s, int64_t* v) {
  s = absl::StripAsciiWhitespace(s);
  if (s.empty() || s.size() > 9) return false;
  *v = 0;
  for (char c : s) {
    if (!absl::ascii_isdigit(c)) return false;
    *v = *v * 10 + (c - '0');
  }
  return true;
}

absl::Status ParseIndexes(absl::string_view list, IndexSet* set) {
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    item = absl::StripAsciiWhitespace(item);
    size_t dash = item.find('-');
    int64_t lo = 0, hi = 0;
    bool ok = dash == absl::string_view::npos
                  ? ParseIndex(item, &lo) && ParseIndex(item, &hi)
                  : ParseIndex(item.substr(0, dash), &lo) &&
                        ParseIndex(item.substr(dash + 1), &hi) && lo <= hi;
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", Printable(item), "' is not a GPU index or range such as 0-3 (a range is lo-hi)"));
    }
    for (int64_t i = lo; i <= std::min<int64_t>(hi, limits::kMaxGpusPerNode - 1); ++i) {
      set->bits[i / 64] |= uint64_t{1} << (i % 64);
    }
    set->items.push_back(item);
    set->max_hi.push_back(set->max_hi.empty() ? hi : std::max(set->max_hi.back(), hi));
  }
  return absl::OkStatus();
}

// Every entry of a busy-list text, line by line, each of its nodes in hostlist order:
// each(node, indexes), indexes nullptr for a bare node (every GPU), else checked
// against the node's GPU count. each returns OK or a message; errors are "file:line: ...".
template <typename Each>
absl::Status ForEachEntry(absl::string_view text, const std::string& file, const Topology& topo,
                          Each each) {
  size_t names_read = 0;
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_no;
    auto error = [&](absl::string_view message) {
      return absl::InvalidArgumentError(absl::StrCat(file, ":", line_no, ": ", message));
    };
    absl::string_view line = raw.substr(0, raw.find('#'));
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    // The hostlist may hold commas and brackets; the GPU list follows the last ':'.
    size_t colon = line.rfind(':');
    absl::string_view hosts = line.substr(0, colon);
    IndexSet indexes;
    if (colon != absl::string_view::npos) {
      absl::Status s = ParseIndexes(line.substr(colon + 1), &indexes);
      if (!s.ok()) return error(s.message());
    }
    absl::StatusOr<size_t> count = CountHostlist(hosts);
    if (!count.ok()) return error(count.status().message());
    if (*count > limits::kMaxNamesPerFile - names_read) {
      return error(absl::StrCat("the hostlists of this file name more than ",
                                limits::kMaxNamesPerFile, " nodes"));
    }
    names_read += *count;
    absl::StatusOr<HostNames> names = ParseHostlist(hosts);  // read one at a time
    if (!names.ok()) return error(names.status().message());
    Topology::RunHint hint;
    for (auto name = names->begin(); name != names->end(); ++name) {
      NodeId n = topo.FindNode(name, &hint);
      if (n < 0) {
        return error(absl::StrCat("node '", *name, "' is not in cluster ", topo.name()));
      }
      int64_t gpus = static_cast<int64_t>(topo.nodes()[n].gpus.size());
      if (colon != absl::string_view::npos && indexes.max_hi.back() >= gpus) {
        // The first item that reaches past this node's GPUs.
        size_t i = std::lower_bound(indexes.max_hi.begin(), indexes.max_hi.end(), gpus) -
                   indexes.max_hi.begin();
        return error(absl::StrCat("GPU ", indexes.items[i], " is out of range: ", *name,
                                  " has GPUs 0-", gpus - 1));
      }
      absl::Status s = each(n, colon == absl::string_view::npos ? nullptr : &indexes);
      if (!s.ok()) return error(s.message());
    }
  }
  return absl::OkStatus();
}

bool HasIndex(const IndexSet& set, size_t i) { return (set.bits[i / 64] >> (i % 64)) & 1; }

}  // namespace

absl::Status LoadBusyList(absl::string_view text, const std::string& file, ClusterState* state) {
  const Topology& topo = state->topology();
  // Busy GPUs as one bitmap per node (words of 64 GPUs), so that a line marks each of its
  // nodes in at most limits::kMaxGpusPerNode / 64 steps however long its index list is.
  std::vector<size_t> first_word(topo.num_nodes() + 1, 0);
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    first_word[n + 1] = first_word[n] + (topo.nodes()[n].gpus.size() + 63) / 64;
  }
  std::vector<uint64_t> mark(first_word.back(), 0);
  absl::Status read = ForEachEntry(text, file, topo, [&](NodeId n, const IndexSet* indexes) {
    uint64_t* words = &mark[first_word[n]];
    size_t num_words = first_word[n + 1] - first_word[n];
    for (size_t w = 0; w < num_words; ++w) words[w] |= indexes ? indexes->bits[w] : ~uint64_t{0};
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  std::vector<GpuId> gpus;
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    const NodeGpus& node_gpus = topo.nodes()[n].gpus;
    for (size_t i = 0; i < node_gpus.size(); ++i) {
      bool busy = (mark[first_word[n] + i / 64] >> (i % 64)) & 1;
      if (busy && !state->busy(node_gpus[i])) gpus.push_back(node_gpus[i]);
    }
  }
  return state->Allocate(gpus);
}

absl::StatusOr<std::vector<GpuId>> ReadGpusInOrder(absl::string_view text, const std::string& file,
                                                   const Topology& topo) {
  std::vector<GpuId> order;
  std::vector<bool> seen(topo.num_gpus(), false);
  absl::Status read = ForEachEntry(text, file, topo, [&](NodeId n, const IndexSet* indexes) {
    const NodeGpus& node_gpus = topo.nodes()[n].gpus;
    for (size_t i = 0; i < node_gpus.size(); ++i) {
      if (indexes && !HasIndex(*indexes, i)) continue;
      if (seen[node_gpus[i]]) {
        return absl::InvalidArgumentError(
            absl::StrCat("GPU ", topo.nodes()[n].name, ":", i, " is given twice"));
      }
      seen[node_gpus[i]] = true;
      order.push_back(node_gpus[i]);
    }
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  return order;
}

}  // namespace nvlplace
