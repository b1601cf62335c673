// Which GPUs are allocated: the engine's view of a cluster at one moment.
#include "placement/cluster_state.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "placement/hostlist.h"

namespace nvlplace {

ClusterState::ClusterState(std::shared_ptr<const Topology> topo) : topo_(std::move(topo)) {
  busy_.assign(topo_->num_gpus(), false);
  node_free_.resize(topo_->num_nodes());
  for (NodeId n = 0; n < topo_->num_nodes(); ++n) {
    node_free_[n] = static_cast<int>(topo_->nodes()[n].gpus.size());
  }
  domain_free_.resize(topo_->num_domains());
  for (DomainId d = 0; d < topo_->num_domains(); ++d) {
    domain_free_[d] = static_cast<int>(topo_->domains()[d].gpus.size());
  }
  num_free_ = topo_->num_gpus();
}

void ClusterState::Set(GpuId g, bool busy) {
  int delta = busy ? -1 : 1;
  busy_[g] = busy;
  node_free_[topo_->gpus()[g].node] += delta;
  domain_free_[topo_->gpus()[g].domain] += delta;
  num_free_ += delta;
}

absl::Status ClusterState::Allocate(const std::vector<GpuId>& gpus) {
  for (size_t i = 0; i < gpus.size(); ++i) {
    GpuId g = gpus[i];
    if (g < 0 || g >= topo_->num_gpus()) return absl::OutOfRangeError(absl::StrCat("no GPU ", g));
    if (busy_[g]) {
      for (size_t j = 0; j < i; ++j) Set(gpus[j], false);
      const Gpu& gpu = topo_->gpus()[g];
      return absl::FailedPreconditionError(absl::StrCat(
          "GPU ", gpu.index, " of ", topo_->nodes()[gpu.node].name, " is already allocated"));
    }
    Set(g, true);
  }
  return absl::OkStatus();
}

absl::Status ClusterState::Release(const std::vector<GpuId>& gpus) {
  for (size_t i = 0; i < gpus.size(); ++i) {
    GpuId g = gpus[i];
    if (g < 0 || g >= topo_->num_gpus()) return absl::OutOfRangeError(absl::StrCat("no GPU ", g));
    if (!busy_[g]) {
      for (size_t j = 0; j < i; ++j) Set(gpus[j], true);
      const Gpu& gpu = topo_->gpus()[g];
      return absl::FailedPreconditionError(absl::StrCat(
          "GPU ", gpu.index, " of ", topo_->nodes()[gpu.node].name, " is not allocated"));
    }
    Set(g, false);
  }
  return absl::OkStatus();
}

absl::Status LoadBusyList(absl::string_view text, const std::string& file, ClusterState* state) {
  const Topology& topo = state->topology();
  std::vector<bool> mark(topo.num_gpus(), false);
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
    absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(hosts);
    if (!names.ok()) return error(names.status().message());
    for (const std::string& name : *names) {
      NodeId n = topo.FindNode(name);
      if (n < 0) {
        return error(absl::StrCat("node '", name, "' is not in cluster ", topo.name()));
      }
      const Node& node = topo.nodes()[n];
      if (colon == absl::string_view::npos) {
        for (GpuId g : node.gpus) mark[g] = true;
        continue;
      }
      for (absl::string_view item : absl::StrSplit(line.substr(colon + 1), ',')) {
        item = absl::StripAsciiWhitespace(item);
        std::pair<absl::string_view, absl::string_view> range = absl::StrSplit(item, '-');
        int lo = 0, hi = 0;
        if (!absl::SimpleAtoi(range.first, &lo) ||
            !absl::SimpleAtoi(range.second.empty() && item.find('-') == absl::string_view::npos
                                  ? range.first
                                  : range.second,
                              &hi) ||
            lo > hi) {
          return error(absl::StrCat("'", item, "' is not a GPU index or range such as 0-3"));
        }
        if (lo < 0 || hi >= static_cast<int>(node.gpus.size())) {
          return error(absl::StrCat("GPU ", item, " is out of range: ", name, " has GPUs 0-",
                                    node.gpus.size() - 1));
        }
        for (int i = lo; i <= hi; ++i) mark[node.gpus[i]] = true;
      }
    }
  }
  std::vector<GpuId> gpus;
  for (GpuId g = 0; g < topo.num_gpus(); ++g) {
    if (mark[g] && !state->busy(g)) gpus.push_back(g);
  }
  return state->Allocate(gpus);
}

}  // namespace nvlplace
