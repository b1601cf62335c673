// The last good configuration kept beside slurmctld's state, and the status file (snapshot.h).
#include "plugin/snapshot.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "placement/formats/read_file.h"
#include "policies/policy_loader.h"

namespace nvlplace::plugin {
namespace {

namespace fs = std::filesystem;

absl::Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case kLogError:
      return "error";
    case kLogInfo:
      return "info";
    case kLogDebug:
      return "debug";
  }
  return "info";
}

// nvlplace.yaml of the snapshot: the settings in force, the files beside it.
std::string SnapshotYaml(const LoadedConfig& c) {
  std::string out = absl::StrCat(
      "# The last good nvlplace configuration, kept by slurmctld's select plugin (snapshot.h):\n"
      "# read only when ",
      c.config.file, " cannot be loaded.\n", "topology: topology.yaml\n", "policy: policy.yaml\n",
      "log_level: ", LevelName(c.config.log_level), "\n", "candidates: ", c.config.candidates, "\n",
      "default_nvl: ", NvlModeName(c.config.default_nvl), "\n",
      "compare_cons_tres: ", c.config.compare_cons_tres ? "true" : "false", "\n",
      "slurm_blocks: ", c.config.slurm_blocks ? "true" : "false", "\n");
  if (!c.config.nvlink_health.empty()) absl::StrAppend(&out, "nvlink_health: nvlink-health.yaml\n");
  return out;
}

}  // namespace

std::string SnapshotConfigPath(const std::string& dir) {
  return (fs::path(dir) / "nvlplace.yaml").string();
}

std::string SnapshotSource(const std::string& dir) {
  absl::StatusOr<std::string> text = ReadFileToString((fs::path(dir) / "source").string());
  return text.ok() ? *text : "";
}

absl::Status SaveSnapshot(const LoadedConfig& config, const std::string& dir) {
  std::error_code ec;
  fs::path target(dir), fresh(dir + ".new"), old(dir + ".old");
  fs::remove_all(fresh, ec);
  fs::create_directories(fresh, ec);
  if (ec)
    return absl::InternalError(absl::StrCat("cannot create ", fresh.string(), ": ", ec.message()));
  for (auto [name, text] :
       {std::pair<const char*, std::string>{"nvlplace.yaml", SnapshotYaml(config)},
        {"topology.yaml", config.topology_text},
        {"policy.yaml", WritePolicyYaml(*config.policy)},
        {"source", config.config.file}}) {
    if (absl::Status s = WriteText(fresh / name, text); !s.ok()) return s;
  }
  if (!config.config.nvlink_health.empty()) {
    if (absl::Status s = WriteText(fresh / "nvlink-health.yaml", config.health_text); !s.ok()) {
      return s;
    }
  }
  // Replace DIR: the old copy moves aside first (a directory cannot be renamed over another
  // that is not empty), and is removed once the new one is in place.
  fs::remove_all(old, ec);
  if (fs::exists(target)) {
    fs::rename(target, old, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot move ", dir, " aside: ", ec.message()));
  }
  fs::rename(fresh, target, ec);
  if (ec) {
    std::error_code back;
    fs::rename(old, target, back);
    return absl::InternalError(absl::StrCat("cannot rename ", fresh.string(), ": ", ec.message()));
  }
  fs::remove_all(old, ec);
  return absl::OkStatus();
}

std::string StatusJson(const Status& s) {
  nlohmann::json j = {{"schema", "nvlplace.status/1"},    {"config", s.config},
                      {"in_force", s.in_force},           {"describe", s.describe},
                      {"loaded_at", s.loaded_at},         {"last_error", s.last_error},
                      {"last_error_at", s.last_error_at}, {"counters", s.counters}};
  return j.dump(2) + "\n";
}

absl::StatusOr<Status> ParseStatusJson(const std::string& text, const std::string& file) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("schema", "") != "nvlplace.status/1") {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": not an nvlplace status file (schema nvlplace.status/1)"));
  }
  Status s;
  try {
    s.config = j.value("config", "");
    s.in_force = j.value("in_force", "");
    s.describe = j.value("describe", "");
    s.loaded_at = j.value("loaded_at", 0.0);
    s.last_error = j.value("last_error", "");
    s.last_error_at = j.value("last_error_at", 0.0);
    s.counters = j.value("counters", "");
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": ", e.what()));
  }
  return s;
}

absl::Status WriteStatus(const Status& status, const std::string& path) {
  std::string fresh = path + ".new";
  std::error_code ec;
  if (fs::path parent = fs::path(path).parent_path(); !parent.empty()) {
    fs::create_directories(parent, ec);
  }
  if (absl::Status s = WriteText(fresh, StatusJson(status)); !s.ok()) return s;
  fs::rename(fresh, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot rename ", fresh, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace nvlplace::plugin
