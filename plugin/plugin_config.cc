// nvlplace.yaml: parsing and loading (see plugin_config.h).
#include "plugin/plugin_config.h"

#include <sys/stat.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "placement/formats/nvlink_health_yaml.h"
#include "placement/formats/read_file.h"
#include "placement/formats/topology_yaml.h"
#include "placement/formats/yaml_reader.h"
#include "placement/model/status_macros.h"
#include "policies/policy_loader.h"
#include "policies/registry.h"

namespace nvlplace::plugin {
namespace {

using yaml::MapReader;
using yaml::Where;

std::string Resolve(const std::string& file, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  return (std::filesystem::path(file).parent_path() / p).lexically_normal().string();
}

bool LooksLikePath(const std::string& s) {
  return s.find('/') != std::string::npos ||
         (s.size() > 5 && s.compare(s.size() - 5, 5, ".yaml") == 0);
}

}  // namespace

absl::StatusOr<PluginConfig> ParsePluginConfig(absl::string_view text,
                                               const std::string& file) try {
  PluginConfig c;
  c.file = file;
  NVL_ASSIGN_OR_RETURN(yaml::Document doc, yaml::LoadYaml(text, file));
  Where top{&file, doc.root(), "#"};
  if (top.node.IsNull()) return top.Error("empty file; at least 'topology:' is needed");
  NVL_ASSIGN_OR_RETURN(
      MapReader m,
      MapReader::Make(top, {"topology", "policy", "weights", "log_level", "candidates",
                            "default_nvl", "compare_cons_tres", "slurm_blocks", "nvlink_health"}));
  NVL_ASSIGN_OR_RETURN(const Where* topo, m.Require("topology"));
  NVL_ASSIGN_OR_RETURN(std::string topo_path, yaml::ReadString(*topo));
  if (topo_path.empty()) return topo->Error("the topology file name is empty");
  c.topology = Resolve(file, topo_path);
  c.topology_loc = topo->Loc();

  c.policy_loc = top.Loc();
  if (const Where* p = m.Find("policy")) {
    NVL_ASSIGN_OR_RETURN(c.policy, yaml::ReadString(*p));
    if (c.policy.empty()) return p->Error("the policy name is empty");
    if (LooksLikePath(c.policy)) c.policy = Resolve(file, c.policy);
    c.policy_loc = p->Loc();
  }
  if (const Where* w = m.Find("weights")) {
    std::vector<absl::string_view> names(ScorerNames().begin(), ScorerNames().end());
    NVL_ASSIGN_OR_RETURN(MapReader wm, MapReader::Make(*w, names));
    for (const std::string& name : ScorerNames()) {
      const Where* value = wm.Find(name);
      if (value == nullptr) continue;
      NVL_ASSIGN_OR_RETURN(double weight, yaml::ReadNumber(*value));
      if (!IsValidWeight(weight)) return value->Error(kWeightRule);
      c.weights.emplace_back(name, weight);
    }
  }
  if (const Where* l = m.Find("log_level")) {
    NVL_ASSIGN_OR_RETURN(std::string level, yaml::ReadString(*l));
    if (level == "error") {
      c.log_level = kLogError;
    } else if (level == "info") {
      c.log_level = kLogInfo;
    } else if (level == "debug") {
      c.log_level = kLogDebug;
    } else {
      return l->Error(absl::StrCat("log level '", level, "' is not one of error, info, debug"));
    }
  }
  if (const Where* k = m.Find("candidates")) {
    NVL_ASSIGN_OR_RETURN(c.candidates, yaml::ReadInt(*k));
    if (c.candidates < 1 || c.candidates > 16) {
      return k->Error("candidates must be a whole number from 1 to 16");
    }
  }
  if (const Where* d = m.Find("default_nvl")) {
    NVL_ASSIGN_OR_RETURN(std::string mode, yaml::ReadString(*d));
    absl::StatusOr<NvlMode> parsed = ParseNvlMode(mode);
    if (!parsed.ok()) return d->Error(parsed.status().message());
    c.default_nvl = *parsed;
  }
  if (const Where* k = m.Find("compare_cons_tres")) {
    NVL_ASSIGN_OR_RETURN(std::string v, yaml::ReadString(*k));
    if (v != "true" && v != "false") return k->Error("compare_cons_tres must be true or false");
    c.compare_cons_tres = v == "true";
  }
  if (const Where* k = m.Find("slurm_blocks")) {
    NVL_ASSIGN_OR_RETURN(std::string v, yaml::ReadString(*k));
    if (v != "true" && v != "false") return k->Error("slurm_blocks must be true or false");
    c.slurm_blocks = v == "true";
  }
  if (const Where* h = m.Find("nvlink_health")) {
    NVL_ASSIGN_OR_RETURN(std::string health, yaml::ReadString(*h));
    if (health.empty()) return h->Error("the NVLink health file name is empty");
    c.nvlink_health = Resolve(file, health);
    c.nvlink_health_loc = h->Loc();
  }
  return c;
} catch (const std::exception& e) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": ", e.what()));
}

FileStamp StampOf(const std::string& path) {
  FileStamp stamp;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return stamp;
  stamp.exists = true;
  stamp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  stamp.size = static_cast<int64_t>(st.st_size);
  stamp.inode = static_cast<uint64_t>(st.st_ino);
  return stamp;
}

absl::StatusOr<std::unique_ptr<LoadedConfig>> LoadPluginConfig(const std::string& path) try {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  NVL_ASSIGN_OR_RETURN(PluginConfig config, ParsePluginConfig(*text, path));
  auto loaded = std::make_unique<LoadedConfig>();

  auto at_topology = [&](const absl::Status& s) {
    return absl::InvalidArgumentError(
        FormatAt(config.topology_loc,
                 absl::StrCat("cannot use topology ", config.topology, ": ", s.message())));
  };
  auto at_health = [&](const absl::Status& s) {
    return absl::InvalidArgumentError(FormatAt(
        config.nvlink_health_loc,
        absl::StrCat("cannot use NVLink health ", config.nvlink_health, ": ", s.message())));
  };
  absl::StatusOr<std::string> topo_text = ReadFileToString(config.topology);
  if (!topo_text.ok()) return at_topology(topo_text.status());
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(*topo_text, config.topology);
  if (!spec.ok()) return at_topology(spec.status());
  if (!config.nvlink_health.empty()) {
    // The stamp before the file is read: a change while loading shows at the next check.
    loaded->health_stamp = StampOf(config.nvlink_health);
    absl::StatusOr<std::string> text = ReadFileToString(config.nvlink_health);
    if (!text.ok()) return at_health(text.status());
    loaded->health_text = *text;
    absl::StatusOr<NvlinkHealth> health = ParseNvlinkHealthYaml(*text, config.nvlink_health);
    if (!health.ok()) return at_health(health.status());
    spec = ApplyNvlinkHealth(*std::move(spec), *health);
    if (!spec.ok()) return at_health(spec.status());
    loaded->health_describe = DescribeNvlinkHealth(*health);
  }
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(*spec);
  if (!topo.ok()) return at_topology(topo.status());
  loaded->topology_text = *std::move(topo_text);
  absl::StatusOr<std::shared_ptr<const Policy>> policy = LoadPolicy(config.policy);
  if (!policy.ok()) {
    return absl::InvalidArgumentError(FormatAt(
        config.policy_loc,
        absl::StrCat("cannot use policy ", config.policy, ": ", policy.status().message())));
  }
  if (!config.weights.empty()) {
    absl::StatusOr<Policy> weighted = WithWeights(**policy, config.weights);
    if (!weighted.ok()) return weighted.status();
    policy = std::make_shared<const Policy>(*std::move(weighted));
  }
  loaded->topology = *std::move(topo);
  loaded->policy = *std::move(policy);
  loaded->engine = std::make_unique<Engine>(loaded->topology, loaded->policy);
  loaded->config = std::move(config);
  return loaded;
} catch (const std::exception& e) {
  return absl::InternalError(absl::StrCat(path, ": ", e.what()));
}

}  // namespace nvlplace::plugin
