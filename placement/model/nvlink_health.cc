// The cluster spec with the NVLink fabric's failures applied (see nvlink_health.h).
#include "placement/model/nvlink_health.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace nvlplace {
namespace {

absl::Status Bad(const SourceLoc& loc, absl::string_view message) {
  return absl::InvalidArgumentError(FormatAt(loc, message));
}

// Moves `cut` out of their node groups into copies of those groups with one island per GPU.
void CutOffNvlink(const std::set<std::string>& cut, TopologySpec* spec) {
  std::vector<NodeGroupSpec> groups;
  for (NodeGroupSpec& g : spec->node_groups) {
    NodeGroupSpec down = g;
    down.names.clear();
    HostNames kept;
    for (const std::string& name : g.names) (cut.count(name) ? down.names : kept).push_back(name);
    g.names = std::move(kept);
    if (!g.names.empty()) groups.push_back(std::move(g));
    if (!down.names.empty()) {
      down.islands.clear();
      for (int i = 0; i < down.gpus; ++i) down.islands.push_back({i});
      groups.push_back(std::move(down));
    }
  }
  spec->node_groups = std::move(groups);
}

}  // namespace

absl::StatusOr<TopologySpec> ApplyNvlinkHealth(TopologySpec spec, const NvlinkHealth& health) {
  std::set<std::string> known;
  for (const NodeGroupSpec& g : spec.node_groups) known.insert(g.names.begin(), g.names.end());
  std::set<std::string> cut;  // nodes that leave their domain with no NVLink at all
  for (const NvlinkHealth::Down& d : health.down) {
    for (const std::string& n : d.nodes) {
      if (!known.count(n)) {
        return Bad(d.loc, absl::StrCat("node ", n, " is not in cluster ", spec.name));
      }
      cut.insert(n);
    }
  }
  std::set<std::string> split_seen;
  for (const NvlinkHealth::Split& s : health.splits) {
    auto it = std::find_if(spec.domains.begin(), spec.domains.end(),
                           [&](const DomainSpec& d) { return d.name == s.domain; });
    if (it == spec.domains.end()) {
      return Bad(s.loc, absl::StrCat("cluster ", spec.name, " has no multi-node NVLink domain ",
                                     s.domain));
    }
    if (!split_seen.insert(s.domain).second) {
      return Bad(s.loc, absl::StrCat("domain ", s.domain,
                                     " is split twice; give all its "
                                     "partitions in one entry"));
    }
    std::set<std::string> members(it->nodes.begin(), it->nodes.end());
    std::set<std::string> placed;
    DomainSpec whole = *it;
    spec.domains.erase(it);
    for (size_t p = 0; p < s.partitions.size(); ++p) {
      DomainSpec part;
      part.name = absl::StrCat(whole.name, "/p", p + 1);
      part.loc = whole.loc;
      for (const std::string& n : s.partitions[p]) {
        if (!members.count(n)) {
          return Bad(s.loc, absl::StrCat("node ", n, " is not in NVLink domain ", whole.name));
        }
        if (!placed.insert(n).second) {
          return Bad(s.loc, absl::StrCat("node ", n, " is in two partitions of ", whole.name));
        }
        if (!cut.count(n)) part.nodes.push_back(n);
      }
      if (part.nodes.size() > 1) {
        spec.domains.push_back(std::move(part));
      } else {
        cut.insert(part.nodes.begin(), part.nodes.end());  // one node alone: its own NVLink
      }
    }
    for (const std::string& n : whole.nodes) {
      if (!placed.count(n)) cut.insert(n);
    }
  }
  // Nodes whose NVLink is down leave every domain; a domain left with one node is no longer
  // multi-node.
  std::vector<DomainSpec> domains;
  for (DomainSpec& d : spec.domains) {
    HostNames kept;
    for (const std::string& n : d.nodes) {
      if (!cut.count(n)) kept.push_back(n);
    }
    d.nodes = std::move(kept);
    d.expected_gpus = 0;
    // The spares the site keeps stay asked for, as far as the nodes left allow.
    d.spares = std::min(d.spares, static_cast<int>(d.nodes.size()) - 1);
    if (d.nodes.size() > 1) domains.push_back(std::move(d));
  }
  spec.domains = std::move(domains);
  CutOffNvlink(cut, &spec);
  return spec;
}

std::string DescribeNvlinkHealth(const NvlinkHealth& health) {
  std::vector<std::string> parts;
  for (const NvlinkHealth::Split& s : health.splits) {
    std::vector<std::string> sizes;
    for (const auto& p : s.partitions) sizes.push_back(std::to_string(p.size()));
    parts.push_back(absl::StrCat(s.domain, " split into ", s.partitions.size(),
                                 " NVLink partitions (", absl::StrJoin(sizes, " + "), " nodes)"));
  }
  size_t down = 0;
  for (const NvlinkHealth::Down& d : health.down) down += d.nodes.size();
  if (down > 0) parts.push_back(absl::StrCat("NVLink down on ", down, " nodes"));
  return parts.empty() ? "all NVLink healthy" : absl::StrJoin(parts, "; ");
}

}  // namespace nvlplace
