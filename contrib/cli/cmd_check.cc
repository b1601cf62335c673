// nvlplace check: what the topology says of a job's GPUs, and the plugin's nvlplace.yaml.
#include "contrib/cli/cmd_check.h"

#include <algorithm>
#include <cstddef>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "contrib/cli/cli_common.h"
#include "contrib/cli/cmd_check_lists.h"
#include "placement/engine/cost_model.h"
#include "placement/engine/explain.h"
#include "placement/formats/busy_list.h"
#include "placement/formats/topology_yaml.h"
#include "placement/model/cluster_state.h"
#include "placement/model/request.h"
#include "placement/model/status_macros.h"
#include "plugin/plugin_config.h"

namespace nvlplace::cli {
namespace {

constexpr int kExitSplit = 1;

struct CheckArgs {
  std::string topology;
  int tp = 1;
  std::vector<std::string> gpus;
  std::string batch;
  bool per_node = false;
  double comm_share = 0.3;
};

// The topology and the job's GPUs in Slurm's rank order (node order of the topology, which
// is Slurm's node index order for a cluster exported by nvlplace; then GPU index).
struct Held {
  std::shared_ptr<const Topology> topo;
  std::vector<GpuId> ranks;
};

absl::StatusOr<std::vector<GpuId>> HeldGpus(const std::shared_ptr<const Topology>& topo,
                                            const std::vector<std::string>& words) {
  ClusterState held(topo);
  // The busy-list reader parses "NODES:INDEXES"; one word per line.
  NVL_RETURN_IF_ERROR(LoadBusyList(absl::StrJoin(words, "\n"), "the GPU list", &held));
  std::vector<GpuId> ranks;
  for (GpuId g = 0; g < topo->num_gpus(); ++g) {
    if (held.busy(g)) ranks.push_back(g);
  }
  if (ranks.empty()) return absl::InvalidArgumentError("no GPU given");
  return ranks;
}

absl::StatusOr<Held> ReadHeld(const CheckArgs& a) {
  Held h;
  NVL_ASSIGN_OR_RETURN(h.topo, LoadTopologyFile(a.topology));
  NVL_ASSIGN_OR_RETURN(h.ranks, HeldGpus(h.topo, a.gpus));
  return h;
}

// "nvlink_domains=2 nodes=3 tier=leaf locality=1010000000002": how far the GPUs spread, and
// locality= the engine's rank of that spread (LocalityRank: lower is more local; compare
// two, read nothing else into it).
std::string SpanText(const Topology& topo, const std::vector<GpuId>& ranks) {
  Span s = SpanOf(ranks, topo);
  return absl::StrCat("nvlink_domains=", s.domains, " nodes=", s.nodes,
                      " tier=", SpanTierName(topo, s.tier),
                      " locality=", LocalityRank(s.domains, s.tier));
}

// "node05:4-7 nvlink_domains=1", a line per node of the job.
std::string PerNodeText(const Topology& topo, const std::vector<GpuId>& ranks) {
  std::map<NodeId, std::vector<GpuId>> by_node;
  for (GpuId g : ranks) by_node[topo.gpus()[g].node].push_back(g);
  std::vector<std::string> lines;
  for (const auto& [node, gpus] : by_node) {
    std::set<DomainId> domains;
    std::vector<int> idx;
    for (GpuId g : gpus) {
      domains.insert(topo.DomainOf(g));
      idx.push_back(topo.gpus()[g].index);
    }
    lines.push_back(absl::StrCat(topo.nodes()[node].name, ":", IndexList(idx),
                                 " nvlink_domains=", domains.size()));
  }
  return absl::StrJoin(lines, "\n");
}

int SpanBatch(const CheckArgs& a) {
  absl::StatusOr<std::shared_ptr<const Topology>> topo = LoadTopologyFile(a.topology);
  if (!topo.ok()) return Fail(topo.status());
  return AnswerLines(a.batch, [&](absl::string_view line) -> absl::StatusOr<std::string> {
    std::vector<std::string> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    NVL_ASSIGN_OR_RETURN(std::vector<GpuId> ranks, HeldGpus(*topo, words));
    return SpanText(**topo, ranks);
  });
}

int Span(const CheckArgs& a) {
  if (a.batch.empty() == a.gpus.empty()) {
    return Fail(absl::InvalidArgumentError(a.batch.empty()
                                               ? "no GPU given: give the GPUs, or --batch FILE"
                                               : "give the GPUs or --batch FILE, not both"));
  }
  if (!a.batch.empty()) return SpanBatch(a);
  absl::StatusOr<Held> h = ReadHeld(a);
  if (!h.ok()) return Fail(h.status());
  std::cout << (a.per_node ? PerNodeText(*h->topo, h->ranks) : SpanText(*h->topo, h->ranks))
            << "\n";
  return kExitOk;
}

absl::Status TpDivides(int tp, size_t gpus) {
  if (gpus % static_cast<size_t>(tp) == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--tp ", tp, " does not divide the ", gpus, " GPUs given"));
}

// The job's GPUs in the order given: word by word (a rank map's order, or Slurm's), each
// word's GPUs by index. A GPU given twice is an error.
absl::StatusOr<std::vector<GpuId>> RanksInOrder(const Topology& topo,
                                                const std::vector<std::string>& words) {
  NVL_ASSIGN_OR_RETURN(std::vector<GpuId> ranks,
                       ReadGpusInOrder(absl::StrJoin(words, "\n"), "the GPU list", topo));
  if (ranks.empty()) return absl::InvalidArgumentError("no GPU given");
  return ranks;
}

// "comm_s=0.21 ideal_comm_s=0.19 stretch=1.03 nvlink_domains=...": the cost model's
// communication per training step of a job of TP groups of --tp on these GPUs in this rank
// order, the same on the best placement there is, and how much longer the job runs than on
// that one when communication is --comm-share of its time there (the replay's stretch:
// (1 - share) + share * min(10, comm / ideal)).
int Comm(const CheckArgs& a) {
  absl::StatusOr<std::shared_ptr<const Topology>> topo = LoadTopologyFile(a.topology);
  if (!topo.ok()) return Fail(topo.status());
  absl::StatusOr<std::vector<GpuId>> ranks = RanksInOrder(**topo, a.gpus);
  if (!ranks.ok()) return Fail(ranks.status());
  const int n = static_cast<int>(ranks->size());
  if (absl::Status s = TpDivides(a.tp, ranks->size()); !s.ok()) return Fail(s);
  RequestSpec spec;
  spec.gpus = n;
  spec.tp = a.tp;
  absl::StatusOr<Request> request = ResolveRequest(spec, **topo);
  if (!request.ok()) return Fail(request.status());
  const ModelProfile model;
  const double comm = EstimateComm(**topo, *ranks, *request, model).total();
  const double ideal = IdealComm(**topo, *request, model).total();
  const double ratio = ideal > 0 ? std::min(10.0, comm / ideal) : 1.0;
  const double stretch = (1 - a.comm_share) + a.comm_share * ratio;
  std::cout << absl::StrFormat("comm_s=%.6g ideal_comm_s=%.6g stretch=%.4f ", comm, ideal, stretch)
            << SpanText(**topo, *ranks) << "\n";
  return kExitOk;
}

int TpGroups(const CheckArgs& a) {
  absl::StatusOr<Held> h = ReadHeld(a);
  if (!h.ok()) return Fail(h.status());
  const Topology& topo = *h->topo;
  const std::vector<GpuId>& ranks = h->ranks;
  if (absl::Status s = TpDivides(a.tp, ranks.size()); !s.ok()) return Fail(s);
  int split = 0, groups = static_cast<int>(ranks.size()) / a.tp;
  for (int k = 0; k < groups; ++k) {
    const std::ptrdiff_t first = static_cast<std::ptrdiff_t>(k) * a.tp;
    std::vector<GpuId> group(ranks.begin() + first, ranks.begin() + first + a.tp);
    std::vector<std::string> where, domains;
    for (const auto& [node, idx] : GpusByNode(group, topo)) {
      where.push_back(absl::StrCat(node, ":", IndexList(idx)));
    }
    std::set<DomainId> seen;
    for (GpuId g : group) {
      if (seen.insert(topo.DomainOf(g)).second)
        domains.push_back(topo.domains()[topo.DomainOf(g)].name);
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
            << topo.nodes().size() << " nodes, " << topo.num_gpus() << " GPUs), policy " << c.policy
            << ", " << c.candidates << " candidates, default nvl=" << NvlModeName(c.default_nvl)
            << "\n";
  return kExitOk;
}

void AddTpGroups(CLI::App* check, std::function<int()>* run) {
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
}

void AddSpan(CLI::App* check, std::function<int()>* run) {
  auto a = std::make_shared<CheckArgs>();
  CLI::App* c = check->add_subcommand(
      "span",
      "How far the job's GPUs spread: \"nvlink_domains=N nodes=N tier=T locality=L\" (T: "
      "node, a fabric tier, or disconnected; L: the engine's locality rank, lower is more "
      "local, for comparing two jobs)");
  c->add_option("--topology", a->topology, "cluster YAML file")->required();
  c->add_option("gpus", a->gpus, "the job's GPUs as NODES:INDEXES words");
  CLI::Option* per_node = c->add_flag(
      "--per-node", a->per_node,
      "a line per node instead: \"node05:4-7 nvlink_domains=1\" (the NVLink domains of the "
      "job's GPUs on that node)");
  c->add_option("--batch", a->batch,
                "a job per line of FILE (- for stdin), its NODES:INDEXES words; a span line "
                "for each")
      ->excludes(per_node);
  c->callback([a, run] { *run = [a] { return Span(*a); }; });
}

void AddComm(CLI::App* check, std::function<int()>* run) {
  auto a = std::make_shared<CheckArgs>();
  CLI::App* c = check->add_subcommand(
      "comm",
      "The cost model's communication per training step on the job's GPUs in rank order, "
      "against the best placement: \"comm_s=S ideal_comm_s=S stretch=X nvlink_domains=N "
      "...\" (stretch: how much longer the job runs than on the best placement)");
  c->add_option("--topology", a->topology, "cluster YAML file")->required();
  c->add_option("--tp", a->tp, "tensor-parallel size (consecutive ranks)")
      ->check(CLI::Range(1, 65536));
  c->add_option("--comm-share", a->comm_share,
                "share of the job's time spent communicating on the best placement (default "
                "0.3)")
      ->check(CLI::Range(0.0, 1.0));
  c->add_option("gpus", a->gpus,
                "the job's GPUs as NODES:INDEXES words in rank order (a rank map's order, "
                "else Slurm's node order)")
      ->required();
  c->callback([a, run] { *run = [a] { return Comm(*a); }; });
}

void AddPluginConfig(CLI::App* check, std::function<int()>* run) {
  auto config = std::make_shared<std::string>();
  CLI::App* c =
      check->add_subcommand("plugin-config",
                            "Load the select plugin's nvlplace.yaml as slurmctld would (exit 0 ok, "
                            "2 with the file:line of the first error)");
  c->add_option("file", *config, "nvlplace.yaml")->required();
  c->callback([config, run] { *run = [config] { return PluginConfigCheck(*config); }; });
}

}  // namespace

void AddCheckCommand(CLI::App& app, std::function<int()>* run) {
  CLI::App* check = app.add_subcommand(
      "check",
      "Facts about the GPUs a job holds; hostlists and index lists; the plugin's "
      "nvlplace.yaml");
  check->require_subcommand(1);
  AddTpGroups(check, run);
  AddSpan(check, run);
  AddComm(check, run);
  AddPluginConfig(check, run);
  AddListChecks(check, run);
}

}  // namespace nvlplace::cli
