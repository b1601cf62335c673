// The place subcommand of nvlplace: one placement decision, explained.
#include "contrib/cli/cmd_place.h"

#include <cstdint>
#include <iostream>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "contrib/cli/cli_common.h"
#include "placement/engine/engine.h"
#include "placement/engine/explain.h"
#include "placement/formats/busy_list.h"
#include "placement/formats/nvlink_health_yaml.h"
#include "placement/formats/topology_yaml.h"
#include "placement/model/limits.h"
#include "policies/policy_loader.h"

namespace nvlplace::cli {
namespace {

constexpr int kExitNotPlaced = 1;

// A whole decimal number from lo to hi. The value is rewritten in plain decimal, so that
// CLI11 (which reads "010" as octal) converts what was checked. Help shows "[lo..hi]".
CLI::Validator WholeNumber(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        int64_t v;
        if (!absl::SimpleAtoi(text, &v) || v < lo || v > hi) {
          return absl::StrCat(QuoteUserText(text), " is not a whole number from ", lo, " to ", hi);
        }
        text = absl::StrCat(v);
        return "";
      },
      absl::StrCat("[", lo, "..", hi, "]"));
}

struct PlaceArgs {
  std::string topology;
  std::string nvlink_health;  // "": the cluster as its file says
  std::string busy;
  std::string policy = "topo";
  std::string nvl = "strict";
  std::string format = "text";
  bool max_tier_preferred = false;
  RequestSpec spec;
};

int Place(const PlaceArgs& a) {
  absl::StatusOr<std::shared_ptr<const Topology>> topo =
      LoadTopologyWithHealth(a.topology, a.nvlink_health);
  if (!topo.ok()) return Fail(topo.status());
  absl::StatusOr<std::shared_ptr<const Policy>> policy = LoadPolicy(a.policy);
  if (!policy.ok()) return Fail(policy.status());
  ClusterState state(*topo);
  if (!a.busy.empty()) {
    absl::StatusOr<std::string> text = ReadFileToString(a.busy);
    if (!text.ok()) return Fail(text.status());
    absl::Status s = LoadBusyList(*text, a.busy, &state);
    if (!s.ok()) return Fail(s);
  }
  RequestSpec spec = a.spec;
  absl::StatusOr<NvlMode> nvl = ParseNvlMode(a.nvl);
  if (!nvl.ok()) return Fail(nvl.status());
  spec.nvl = *nvl;
  spec.max_tier_required = !a.max_tier_preferred;
  absl::StatusOr<Request> request = ResolveRequest(spec, **topo);
  if (!request.ok()) return Fail(request.status());
  Engine engine(*topo, *policy);
  PlacementResult result = engine.Place(state, *request);
  std::string text = a.format == "json" ? PlacementToJson(result, **topo).dump(2) + "\n"
                                        : PlacementText(result, **topo);
  absl::Status s = WriteOutput("-", text);
  if (!s.ok()) return Fail(s);
  return result.placed ? kExitOk : kExitNotPlaced;
}

}  // namespace

void AddPlaceCommand(CLI::App& app, std::function<int()>* run) {
  auto a = std::make_shared<PlaceArgs>();
  CLI::App* c = app.add_subcommand(
      "place", "Choose GPUs for one job and explain why (exit 0 placed, 1 not placeable now)");
  c->add_option("--topology", a->topology, "cluster YAML file")->required();
  c->add_option("--nvlink-health", a->nvlink_health,
                "NVLink health file: split racks, trays with NVLink down (configs/FORMAT.md)");
  c->add_option("--busy", a->busy,
                "file of allocated GPUs: lines 'NODES' or 'NODES:INDEXES', e.g. node[0-3]:0-3");
  c->add_option("--gpus", a->spec.gpus, "GPUs in all (or give --nodes and --gpus-per-node)")
      ->transform(WholeNumber(1, limits::kMaxJobGpus));
  c->add_option("--nodes", a->spec.nodes, "exactly this many nodes")
      ->transform(WholeNumber(1, limits::kMaxJobNodes));
  c->add_option("--gpus-per-node", a->spec.gpus_per_node, "GPUs on each node")
      ->transform(WholeNumber(1, limits::kMaxGpusPerNode));
  c->add_option("--tp", a->spec.tp, "tensor-parallel size (ranks innermost)")
      ->transform(WholeNumber(1, limits::kMaxGroupSize));
  c->add_option("--pp", a->spec.pp, "pipeline-parallel size (default 1)")
      ->transform(WholeNumber(1, limits::kMaxGroupSize));
  c->add_option("--dp", a->spec.dp, "data-parallel size (default GPUs / (TP x PP))")
      ->transform(WholeNumber(1, limits::kMaxGroupSize));
  c->add_option("--nvl", a->nvl, "TP groups inside NVLink domains: strict, prefer or off")
      ->check(CLI::IsMember({"strict", "prefer", "off"}));
  c->add_option("--max-tier", a->spec.max_tier, "highest fabric tier the job may span");
  c->add_flag("--max-tier-preferred", a->max_tier_preferred,
              "treat --max-tier as a preference, relaxed with a note");
  c->add_flag("--exclusive", a->spec.exclusive, "whole nodes only (every GPU of a node free)");
  c->add_option("--include", a->spec.include, "hostlist: only these nodes");
  c->add_option("--exclude", a->spec.exclude, "hostlist: never these nodes");
  c->add_option("--gpu-model", a->spec.gpu_model,
                "only GPUs of this model (any case, as Slurm's --gpus=h100:8)");
  c->add_option("--segment", a->spec.segment,
                "Slurm's --segment: the nodes in segments of this many, each inside one NVLink "
                "domain (needs --nodes)")
      ->transform(WholeNumber(1, limits::kMaxJobNodes));
  c->add_flag("--spread-segments", a->spec.spread_segments,
              "Slurm's --spread-segments: no two segments in one NVLink domain");
  c->add_flag("--consolidate-segments", a->spec.consolidate_segments,
              "Slurm's --consolidate-segments: every segment inside one block");
  c->add_flag("--one-domain", a->spec.one_domain,
              "the whole job inside one NVLink domain, or not placed (--nvl-domain=one)");
  c->add_flag("--slurm-blocks", a->spec.slurm_blocks,
              "Slurm runs topology/block on the multi-node NVLink domains (nvlplace.yaml "
              "slurm_blocks): a job block keeps inside one block stays inside one domain");
  c->add_flag("--use-spares", a->spec.may_use_spares,
              "the job may take trays a domain keeps as spares (a replacement)");
  c->add_option("--policy", a->policy, "policy name (topo, pack, firstfit, random) or YAML file");
  c->add_option("--format", a->format, "text or json (schema nvlplace.placement/1)")
      ->check(CLI::IsMember({"text", "json"}));
  c->callback([run, a] { *run = [a] { return Place(*a); }; });
}

}  // namespace nvlplace::cli
