// nvlplace status: the status file slurmctld's nvlplace writes at every load of its
// configuration and with each periodic summary (${StateSaveLocation}/nvlplace/status.json).
#include "contrib/cli/cmd_status.h"

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "contrib/cli/cli_common.h"
#include "placement/model/status_macros.h"
#include "plugin/snapshot.h"

namespace nvlplace::cli {
namespace {

// Exit code when the plugin's last load failed (the last good configuration, or none, is in
// force): monitoring can alert on it.
constexpr int kExitLoadFailed = 1;

struct StatusArgs {
  std::string state_dir;
  std::string slurm_conf;
  bool json = false;
};

absl::StatusOr<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// StateSaveLocation from slurm.conf (keys are case-insensitive, comments start with #).
absl::StatusOr<std::string> StateSaveLocation(const std::string& slurm_conf) {
  NVL_ASSIGN_OR_RETURN(std::string text, ReadWhole(slurm_conf));
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    absl::string_view l = absl::StripAsciiWhitespace(line.substr(0, line.find('#')));
    if (absl::StartsWithIgnoreCase(l, "StateSaveLocation=")) {
      return std::string(absl::StripAsciiWhitespace(l.substr(l.find('=') + 1)));
    }
  }
  return absl::NotFoundError(absl::StrCat(
      slurm_conf, ": no StateSaveLocation= line; give the directory with --state-dir"));
}

std::string When(double epoch_s, double now_s) {
  if (epoch_s <= 0) return "never";
  auto t = static_cast<std::time_t>(epoch_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
  auto ago = static_cast<long>(now_s - epoch_s);
  std::string rel = ago < 120    ? absl::StrCat(ago, " s ago")
                    : ago < 7200 ? absl::StrCat(ago / 60, " min ago")
                                 : absl::StrCat(ago / 3600, " h ago");
  return absl::StrCat(buf, " (", rel, ")");
}

std::string InForce(const plugin::Status& s) {
  if (s.in_force == "loaded") return absl::StrCat("the configuration in ", s.config);
  if (s.in_force == "snapshot") {
    return "the last good copy kept beside slurmctld's state (the configuration file did not "
           "load)";
  }
  return "nothing: jobs with nvlplace options wait, other jobs are placed as select/cons_tres";
}

int RunStatus(const StatusArgs& a) {
  std::string dir = a.state_dir;
  if (dir.empty()) {
    std::string conf = a.slurm_conf;
    if (conf.empty()) {
      const char* env = std::getenv("SLURM_CONF");
      conf = env != nullptr && *env != '\0' ? env : "/etc/slurm/slurm.conf";
    }
    absl::StatusOr<std::string> found = StateSaveLocation(conf);
    if (!found.ok()) return Fail(found.status());
    dir = *found;
  }
  const std::string path = absl::StrCat(dir, "/nvlplace/status.json");
  absl::StatusOr<std::string> text = ReadWhole(path);
  if (!text.ok()) {
    return Fail(absl::NotFoundError(
        absl::StrCat(text.status().message(),
                     ": slurmctld's nvlplace has not written a status yet (is the plugin loaded, "
                     "SelectType=select/cons_tres_nvlplace?)")));
  }
  absl::StatusOr<plugin::Status> st = plugin::ParseStatusJson(*text, path);
  if (!st.ok()) return Fail(st.status());
  const bool failed = !st->last_error.empty() || st->in_force != "loaded";
  if (a.json) {
    std::cout << *text;
    return failed ? kExitLoadFailed : kExitOk;
  }
  const double now = static_cast<double>(std::time(nullptr));
  std::cout << "nvlplace in slurmctld (" << path << ")\n"
            << "  config:     " << st->config << "\n"
            << "  in force:   " << InForce(*st) << "\n";
  if (st->in_force != "none") {
    std::cout << "  loaded:     " << When(st->loaded_at, now) << "\n"
              << "  describe:   " << st->describe << "\n";
  }
  if (st->last_error.empty()) {
    std::cout << "  last load:  ok\n";
  } else {
    std::cout << "  last load:  FAILED " << When(st->last_error_at, now) << ": " << st->last_error
              << "\n"
              << "              fix it, then `scontrol reconfigure`\n";
  }
  if (!st->counters.empty()) std::cout << "  counters:   " << st->counters << "\n";
  return failed ? kExitLoadFailed : kExitOk;
}

}  // namespace

void AddStatusCommand(CLI::App& app, std::function<int()>* run) {
  auto args = std::make_shared<StatusArgs>();
  CLI::App* cmd = app.add_subcommand(
      "status",
      "What slurmctld's nvlplace has in force: the configuration, when it loaded, the last "
      "load error, the counters. Exit 1 when the last load failed");
  cmd->add_option("--state-dir", args->state_dir,
                  "slurmctld's StateSaveLocation (default: read from slurm.conf)");
  cmd->add_option("--slurm-conf", args->slurm_conf,
                  "slurm.conf to read StateSaveLocation from (default: $SLURM_CONF, else "
                  "/etc/slurm/slurm.conf)");
  cmd->add_flag("--json", args->json, "print the status file as it is (nvlplace.status/1)");
  cmd->callback([args, run] { *run = [args] { return RunStatus(*args); }; });
}

}  // namespace nvlplace::cli
