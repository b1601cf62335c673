// Which GPUs are allocated: the engine's view of a cluster at one moment.
#include "placement/model/cluster_state.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace nvlplace {

ClusterState::ClusterState(std::shared_ptr<const Topology> topo) : topo_(std::move(topo)) {
  busy_.assign(topo_->num_gpus(), 0);
  node_free_.resize(topo_->num_nodes());
  for (NodeId n = 0; n < topo_->num_nodes(); ++n) {
    node_free_[n] = static_cast<int>(topo_->nodes()[n].gpus.size());
  }
  domain_free_.resize(topo_->num_domains());
  for (DomainId d = 0; d < topo_->num_domains(); ++d) {
    domain_free_[d] = static_cast<int>(topo_->domains()[d].gpus.size());
  }
  leaf_group_free_.assign(topo_->num_leaf_groups(), 0);
  for (NodeId n = 0; n < topo_->num_nodes(); ++n) {
    leaf_group_free_[topo_->LeafGroup(n)] += node_free_[n];
  }
  num_free_ = topo_->num_gpus();
  // GPUs of nodes nvlplace does not place on (placed: false) are busy for good.
  for (const Node& node : topo_->nodes()) {
    if (!node.placed) {
      for (GpuId g : node.gpus) {
        Set(g, true);
        busy_[g] = kHeld;
      }
    }
  }
}

ClusterState::ClusterState(const ClusterState& other)
    : topo_(other.topo_),
      busy_(other.busy_),
      node_free_(other.node_free_),
      domain_free_(other.domain_free_),
      leaf_group_free_(other.leaf_group_free_),
      num_free_(other.num_free_),
      busy_fingerprint_(other.busy_fingerprint_) {}

ClusterState& ClusterState::operator=(const ClusterState& other) {
  if (this == &other) return *this;
  topo_ = other.topo_;
  busy_ = other.busy_;
  node_free_ = other.node_free_;
  domain_free_ = other.domain_free_;
  leaf_group_free_ = other.leaf_group_free_;
  num_free_ = other.num_free_;
  busy_fingerprint_ = other.busy_fingerprint_;
  // The derived index followed the old contents: it must not follow these.
  journal_begin_ += journal_.size() + 1;
  journal_.clear();
  std::lock_guard<std::mutex> lock(derived_mutex_);
  derived_.reset();
  return *this;
}

bool ClusterState::Held(GpuId g) const { return busy_[g] == kHeld; }

void ClusterState::Set(GpuId g, bool busy) {
  int delta = busy ? -1 : 1;
  busy_[g] = busy ? kBusy : kFree;
  NodeId n = topo_->gpus()[g].node;
  node_free_[n] += delta;
  leaf_group_free_[topo_->LeafGroup(n)] += delta;
  domain_free_[topo_->gpus()[g].domain] += delta;
  num_free_ += delta;
  busy_fingerprint_ ^= topo_->GpuMix(g);
}

void ClusterState::Journal(absl::Span<const GpuId> gpus) {
  // The journal holds at most about one entry per node: past that, an index rebuilds from
  // the counts as cheaply as it would catch up. A call's nodes are kept once per run of
  // GPUs on one node; every call's are kept, a node's repeated ones too (an index may have
  // read the journal between two calls).
  if (journal_.size() + gpus.size() > static_cast<size_t>(topo_->num_nodes()) + 64) {
    journal_begin_ += journal_.size();
    journal_.clear();
  }
  NodeId last = -1;
  for (GpuId g : gpus) {
    NodeId n = topo_->gpus()[g].node;
    if (n != last) journal_.push_back(n);
    last = n;
  }
}

absl::Status ClusterState::CheckIds(absl::Span<const GpuId> gpus) const {
  for (GpuId g : gpus) {
    if (g < 0 || g >= topo_->num_gpus()) return absl::OutOfRangeError(absl::StrCat("no GPU ", g));
  }
  return absl::OkStatus();
}

absl::Status ClusterState::Allocate(absl::Span<const GpuId> gpus) {
  if (absl::Status s = CheckIds(gpus); !s.ok()) return s;
  for (size_t i = 0; i < gpus.size(); ++i) {
    GpuId g = gpus[i];
    if (Held(g)) continue;
    if (busy_[g]) {
      for (size_t j = 0; j < i; ++j) {
        if (!Held(gpus[j])) Set(gpus[j], false);
      }
      const Gpu& gpu = topo_->gpus()[g];
      return absl::FailedPreconditionError(absl::StrCat(
          "GPU ", gpu.index, " of ", topo_->nodes()[gpu.node].name, " is already allocated"));
    }
    Set(g, true);
  }
  Journal(gpus);
  return absl::OkStatus();
}

bool ClusterState::SetNodeFree(NodeId n, absl::Span<const uint8_t> free) {
  const NodeGpus& gpus = topo_->nodes()[n].gpus;
  bool changed = false;
  for (size_t i = 0; i < gpus.size(); ++i) {
    GpuId g = gpus[i];
    bool busy = free[i] == 0;
    if (busy_[g] == kHeld || (busy_[g] != kFree) == busy) continue;
    Set(g, busy);
    changed = true;
  }
  if (changed) {
    // As Journal keeps it: at most about one entry per node.
    if (journal_.size() >= static_cast<size_t>(topo_->num_nodes()) + 64) {
      journal_begin_ += journal_.size();
      journal_.clear();
    }
    journal_.push_back(n);
  }
  return changed;
}

absl::Status ClusterState::Release(absl::Span<const GpuId> gpus) {
  if (absl::Status s = CheckIds(gpus); !s.ok()) return s;
  for (size_t i = 0; i < gpus.size(); ++i) {
    GpuId g = gpus[i];
    if (Held(g)) continue;
    if (!busy_[g]) {
      for (size_t j = 0; j < i; ++j) {
        if (!Held(gpus[j])) Set(gpus[j], true);
      }
      const Gpu& gpu = topo_->gpus()[g];
      return absl::FailedPreconditionError(absl::StrCat(
          "GPU ", gpu.index, " of ", topo_->nodes()[gpu.node].name, " is not allocated"));
    }
    Set(g, false);
  }
  Journal(gpus);
  return absl::OkStatus();
}

}  // namespace nvlplace
