// Policies as YAML presets, parsed once and validated against the registry, and their
// adjusted copies.
#include "policies/policy_loader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "placement/formats/read_file.h"
#include "placement/formats/yaml_reader.h"
#include "placement/model/status_macros.h"
#include "policies/registry.h"
#include "yaml-cpp/yaml.h"

#ifndef NVLPLACE_POLICY_DIRS
#define NVLPLACE_POLICY_DIRS ""
#endif

namespace nvlplace {
namespace {

// Where `name` is in the registry's table of scorers; unknown names after every known one.
size_t RegistryIndex(absl::string_view name) {
  const std::vector<std::string>& names = ScorerNames();
  return std::find(names.begin(), names.end(), name) - names.begin();
}

}  // namespace

bool IsValidWeight(double weight) {
  return std::isfinite(weight) && weight > 0 && weight <= kMaxWeight;
}

absl::StatusOr<std::shared_ptr<const Policy>> ParsePolicyYaml(absl::string_view text,
                                                              const std::string& file) {
  using yaml::MapReader;
  using yaml::Where;
  NVL_ASSIGN_OR_RETURN(yaml::Document doc, yaml::LoadYaml(text, file));
  Where top{&file, doc.root(), "#"};
  NVL_ASSIGN_OR_RETURN(
      MapReader m,
      MapReader::Make(top, {"name", "description", "generators", "weights", "seed", "candidates",
                            "candidate_gpus", "mix_models", "use_spares", "max_comm_ratio"}));
  auto policy = std::make_shared<Policy>();
  NVL_ASSIGN_OR_RETURN(const Where* name, m.Require("name"));
  NVL_ASSIGN_OR_RETURN(policy->name, yaml::ReadString(*name));
  if (const Where* d = m.Find("description")) {
    NVL_ASSIGN_OR_RETURN(policy->description, yaml::ReadString(*d));
  }
  if (const Where* s = m.Find("seed")) {
    NVL_ASSIGN_OR_RETURN(int seed, yaml::ReadInt(*s));
    if (seed < 0) return s->Error("seed must be 0 or more");
    policy->seed = static_cast<uint64_t>(seed);
  }
  if (const Where* c = m.Find("candidates")) {
    NVL_ASSIGN_OR_RETURN(policy->candidates, yaml::ReadInt(*c));
    if (policy->candidates < 1 || policy->candidates > 1024) {
      return c->Error("candidates must be between 1 and 1024");
    }
  }
  if (const Where* c = m.Find("candidate_gpus")) {
    NVL_ASSIGN_OR_RETURN(policy->candidate_gpus, yaml::ReadInt(*c));
    if (policy->candidate_gpus < 1 || policy->candidate_gpus > limits::kMaxJobGpus) {
      return c->Error(absl::StrCat("candidate_gpus must be between 1 and ", limits::kMaxJobGpus));
    }
  }
  if (const Where* x = m.Find("mix_models")) {
    NVL_ASSIGN_OR_RETURN(policy->mix_models, yaml::ReadBool(*x));
  }
  if (const Where* x = m.Find("use_spares")) {
    NVL_ASSIGN_OR_RETURN(policy->use_spares, yaml::ReadBool(*x));
  }
  if (const Where* x = m.Find("max_comm_ratio")) {
    NVL_ASSIGN_OR_RETURN(policy->max_comm_ratio, yaml::ReadNumber(*x));
    if (!(policy->max_comm_ratio == 0 ||
          (policy->max_comm_ratio >= 1 && policy->max_comm_ratio <= 1e6))) {
      return x->Error("max_comm_ratio must be 0 (off) or a number from 1 to 1e6");
    }
  }
  NVL_ASSIGN_OR_RETURN(const Where* gens, m.Require("generators"));
  NVL_ASSIGN_OR_RETURN(std::vector<std::string> generators, yaml::ReadStringList(*gens));
  if (generators.empty()) return gens->Error("at least one generator is needed");
  for (const std::string& g : generators) {
    absl::StatusOr<std::shared_ptr<const Generator>> made = MakeGenerator(g);
    if (!made.ok()) return gens->Error(made.status().message());
    policy->generators.push_back(*std::move(made));
  }
  NVL_ASSIGN_OR_RETURN(const Where* weights, m.Require("weights"));
  std::vector<absl::string_view> names(ScorerNames().begin(), ScorerNames().end());
  NVL_ASSIGN_OR_RETURN(MapReader w, MapReader::Make(*weights, names));
  for (const std::string& scorer : ScorerNames()) {
    const Where* value = w.Find(scorer);
    if (value == nullptr) continue;
    NVL_ASSIGN_OR_RETURN(double weight, yaml::ReadNumber(*value));
    if (!IsValidWeight(weight)) {
      return value->Error(absl::StrCat(kWeightRule, "; leave a scorer out to give it no weight"));
    }
    NVL_ASSIGN_OR_RETURN(std::shared_ptr<const Scorer> s, MakeScorer(scorer));
    policy->scorers.push_back({std::move(s), weight});
  }
  if (policy->scorers.empty()) return weights->Error("at least one scorer needs a weight");
  return std::shared_ptr<const Policy>(std::move(policy));
}

std::string WritePolicyYaml(const Policy& policy) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << policy.name;
  out << YAML::Key << "description" << YAML::Value << policy.description;
  out << YAML::Key << "generators" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& g : policy.generators) out << std::string(g->Name());
  out << YAML::EndSeq;
  out << YAML::Key << "weights" << YAML::Value << YAML::BeginMap;
  for (const Policy::Weighted& w : policy.scorers) {
    out << YAML::Key << std::string(w.scorer->Name()) << YAML::Value
        << absl::StrFormat("%.17g", w.weight);
  }
  out << YAML::EndMap;
  out << YAML::Key << "seed" << YAML::Value << policy.seed;
  out << YAML::Key << "candidates" << YAML::Value << policy.candidates;
  out << YAML::Key << "candidate_gpus" << YAML::Value << policy.candidate_gpus;
  out << YAML::Key << "mix_models" << YAML::Value << policy.mix_models;
  out << YAML::Key << "use_spares" << YAML::Value << policy.use_spares;
  if (policy.max_comm_ratio > 0) {
    out << YAML::Key << "max_comm_ratio" << YAML::Value
        << absl::StrFormat("%.17g", policy.max_comm_ratio);
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

absl::StatusOr<Policy> WithWeights(const Policy& base,
                                   const std::vector<std::pair<std::string, double>>& weights) {
  Policy policy = base;
  policy.name = absl::StrCat(base.name, "+weights");
  for (const auto& [name, weight] : weights) {
    if (!IsValidWeight(weight)) {
      return absl::InvalidArgumentError(absl::StrCat("weight of '", name, "': ", kWeightRule));
    }
    auto same = [&name = name](const Policy::Weighted& w) { return w.scorer->Name() == name; };
    auto it = std::find_if(policy.scorers.begin(), policy.scorers.end(), same);
    if (it != policy.scorers.end()) {
      it->weight = weight;
      continue;
    }
    NVL_ASSIGN_OR_RETURN(std::shared_ptr<const Scorer> s, MakeScorer(name));
    policy.scorers.push_back({std::move(s), weight});
  }
  // The registry's order, as a loaded policy has: the engine sums the weighted scores in it.
  std::stable_sort(policy.scorers.begin(), policy.scorers.end(),
                   [](const Policy::Weighted& a, const Policy::Weighted& b) {
                     return RegistryIndex(a.scorer->Name()) < RegistryIndex(b.scorer->Name());
                   });
  return policy;
}

absl::StatusOr<std::shared_ptr<const Policy>> LoadPolicy(const std::string& name_or_path) {
  std::string path = name_or_path;
  bool is_path =
      name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".yaml") == 0);
  if (!is_path) {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("NVLPLACE_POLICY_DIR")) dirs.push_back(env);
    for (absl::string_view d : absl::StrSplit(NVLPLACE_POLICY_DIRS, ':', absl::SkipEmpty())) {
      dirs.emplace_back(d);
    }
    path.clear();
    for (const std::string& dir : dirs) {
      std::string candidate = absl::StrCat(dir, "/", name_or_path, ".yaml");
      std::error_code ec;
      if (std::filesystem::exists(candidate, ec)) {
        path = candidate;
        break;
      }
    }
    if (path.empty()) {
      return absl::NotFoundError(absl::StrCat("no policy named '", name_or_path, "' in ",
                                              absl::StrJoin(dirs, ", "),
                                              "; give a path to a policy YAML file instead"));
    }
  }
  NVL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParsePolicyYaml(text, path);
}

}  // namespace nvlplace
