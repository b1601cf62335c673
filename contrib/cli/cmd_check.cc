// The check subcommand of nvlplace: facts about GPUs a job holds, for scripts and tests that
// must not re-implement the topology (which NVLink domain, whether a TP group spans two).
#include "contrib/cli/cmd_check.h"

#include <iostream>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "contrib/cli/cli_common.h"
#include "placement/model/cluster_state.h"
#include "placement/engine/explain.h"
#include "placement/model/status_macros.h"
#include "placement/formats/topology_yaml.h"
#include "plugin/plugin_config.h"
#include "placement/formats/busy_list.h"

namespace nvlplace::cli {
namespace {

constexpr int kExitSplit = 1;

struct CheckArgs {
  std::string topology;
  int tp = 1;
  std::vector<std::string> gpus;
};

// The topology and the job's GPUs in Slurm's rank order (node order of the topology, which
// is Slurm's node index order for a cluster exported by nvlplace; then GPU index).
struct Held {
  std::shared_ptr<const Topology> topo;
  std::vector<GpuId> ranks;
};

absl::StatusOr<Held> ReadHeld(const CheckArgs& a) {
  Held h;
  NVL_ASSIGN_OR_RETURN(h.topo, LoadTopologyFile(a.topology));
  ClusterState held(h.topo);
  // The busy-list reader parses "NODES:INDEXES"; one word per line.
  NVL_RETURN_IF_ERROR(LoadBusyList(absl::StrJoin(a.gpus, "\n"), "the GPU list", &held));
  for (GpuId g = 0; g < h.topo->num_gpus(); ++g) {
    if (held.busy(g)) h.ranks.push_back(g);
  }
  if (h.ranks.empty()) return absl::InvalidArgumentError("no GPU given");
  return h;
}

// "nvlink_domains=2 nodes=3 tier=leaf": how far the GPUs spread.
int Span(const CheckArgs& a) {
  absl::StatusOr<Held> h = ReadHeld(a);
  if (!h.ok()) return Fail(h.status());
  const Topology& topo = *h->topo;
  std::set<DomainId> domains;
  std::vector<NodeId> nodes;
  for (GpuId g : h->ranks) {
    domains.insert(topo.DomainOf(g));
    if (nodes.empty() || nodes.back() != topo.gpus()[g].node) nodes.push_back(topo.gpus()[g].node);
  }
  int tier = topo.CommonTier(nodes);
  std::string tier_name = tier == Topology::kSameNode       ? "node"
                          : tier >= Topology::kDisconnected ? "disconnected"
                                                            : topo.tiers()[tier];
  std::cout << "nvlink_domains=" << domains.size() << " nodes=" << nodes.size()
            << " tier=" << tier_name << "\n";
  return kExitOk;
}

int TpGroups(const CheckArgs& a) {
  absl::StatusOr<Held> h = ReadHeld(a);
  if (!h.ok()) return Fail(h.status());
  const Topology& topo = *h->topo;
  const std::vector<GpuId>& ranks = h->ranks;
  if (ranks.size() % a.tp != 0) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "--tp ", a.tp, " does not divide the ", ranks.size(), " GPUs given")));
  }
  int split = 0, groups = static_cast<int>(ranks.size()) / a.tp;
  for (int k = 0; k < groups; ++k) {
    std::vector<GpuId> group(ranks.begin() + k * a.tp, ranks.begin() + (k + 1) * a.tp);
    std::vector<std::string> where, domains;
    for (const auto& [node, idx] : GpusByNode(group, topo)) {
      where.push_back(absl::StrCat(node, ":", IndexList(idx)));
    }
    std::set<DomainId> seen;
    for (GpuId g : group) {
      if (seen.insert(topo.DomainOf(g)).second) domains.push_back(topo.domains()[topo.DomainOf(g)].name);
    }
    if (domains.size() > 1) ++split;
    std::cout << "tp group " << k << ": " << absl::StrJoin(where, " ")
              << (domains.size() > 1 ? " spans " : " in ") << absl::StrJoin(domains, ",") << "\n";
  }
  std::cout << groups << " TP group" << (groups == 1 ? "" : "s") << " of " << a.tp << " GPUs, "
            << split << " span" << (split == 1 ? "s" : "") << " NVLink domains\n";
  return split ? kExitSplit : kExitOk;
}

// The select plugin's nvlplace.yaml, read and loaded as slurmctld would (topology, policy,
// weights, engine), so that an administrator checks it before `scontrol reconfigure`.
int PluginConfigCheck(const std::string& path) {
  absl::StatusOr<std::unique_ptr<plugin::LoadedConfig>> loaded = plugin::LoadPluginConfig(path);
  if (!loaded.ok()) return Fail(loaded.status());
  const plugin::PluginConfig& c = (*loaded)->config;
  const Topology& topo = *(*loaded)->topology;
  std::cout << path << ": ok: topology " << topo.name() << " from " << c.topology << " ("
            << topo.nodes().size() << " nodes, " << topo.num_gpus() << " GPUs), policy "
            << c.policy << ", " << c.candidates << " candidates, default nvl="
            << NvlModeName(c.default_nvl) << "\n";
  return kExitOk;
}

}  // namespace

void AddCheckCommand(CLI::App& app, std::function<int()>* run) {
  CLI::App* check = app.add_subcommand(
      "check", "Facts about the GPUs a job holds; the plugin's nvlplace.yaml");
  check->require_subcommand(1);
  auto a = std::make_shared<CheckArgs>();
  CLI::App* c = check->add_subcommand(
      "tp-groups",
      "The job's TP groups in Slurm's rank order (node, then GPU index; TP innermost) and the "
      "NVLink domains each spans (exit 0 none split, 1 some split)");
  c->add_option("--topology", a->topology, "cluster YAML file")->required();
  c->add_option("--tp", a->tp, "tensor-parallel size")->required()->check(CLI::Range(1, 65536));
  c->add_option("gpus", a->gpus,
                "the job's GPUs as NODES:INDEXES words, as `scontrol show job -d` gives them "
                "(node[08-09]:0-3 node10:4-7)")
      ->required();
  c->callback([a, run] { *run = [a] { return TpGroups(*a); }; });

  auto b = std::make_shared<CheckArgs>();
  CLI::App* span = check->add_subcommand(
      "span", "How far the job's GPUs spread: \"nvlink_domains=N nodes=N tier=T\" (T: node, a "
              "fabric tier, or disconnected)");
  span->add_option("--topology", b->topology, "cluster YAML file")->required();
  span->add_option("gpus", b->gpus, "the job's GPUs as NODES:INDEXES words")->required();
  span->callback([b, run] { *run = [b] { return Span(*b); }; });

  auto config = std::make_shared<std::string>();
  CLI::App* pc = check->add_subcommand(
      "plugin-config", "Load the select plugin's nvlplace.yaml as slurmctld would (exit 0 ok, "
                       "2 with the file:line of the first error)");
  pc->add_option("file", *config, "nvlplace.yaml")->required();
  pc->callback([config, run] { *run = [config] { return PluginConfigCheck(*config); }; });
}

}  // namespace nvlplace::cli
