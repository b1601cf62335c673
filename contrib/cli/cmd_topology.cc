// The topology subcommands of nvlplace: validate, show, import, export.
#include "contrib/cli/cmd_topology.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "contrib/cli/cli_common.h"
#include "placement/formats/nvidia_smi.h"
#include "placement/formats/slurm_export.h"
#include "placement/formats/slurm_import.h"
#include "placement/formats/topology_json.h"
#include "placement/formats/topology_yaml.h"
#include "placement/model/limits.h"

namespace nvlplace::cli {
namespace {

int Validate(const std::vector<std::string>& files, const TopologyLimits& limits) {
  int rc = kExitOk;
  for (const std::string& file : files) {
    absl::StatusOr<std::shared_ptr<const Topology>> topo = LoadTopologyFile(file, limits);
    if (!topo.ok()) {
      absl::Status s = topo.status();
      if (absl::StrContains(s.message(), "unknown key 'topology'")) {
        // The select plugin's nvlplace.yaml, not a cluster file: say where it is checked.
        s = absl::Status(s.code(), absl::StrCat(s.message(),
                                                "; this looks like the select "
                                                "plugin's nvlplace.yaml: check it with "
                                                "`nvlplace check plugin-config ",
                                                file, "`"));
      }
      rc = std::max(rc, Fail(s));
      continue;
    }
    std::cout << file << ": ok\n" << TopologyOverview(**topo);
  }
  return rc;
}

int Show(const std::string& file, const std::string& format, const TopologyLimits& limits) {
  absl::StatusOr<std::shared_ptr<const Topology>> topo = LoadTopologyFile(file, limits);
  if (!topo.ok()) return Fail(topo.status());
  std::string text;
  if (format == "json") {
    // Names are checked printable UTF-8 when read; replace stays a safety net against throwing.
    text =
        TopologyToJson(**topo).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else if (format == "yaml") {
    text = WriteTopologyYaml(**topo);
  } else {
    text = TopologySummary(**topo);
  }
  absl::Status s = WriteOutput("-", text);
  return s.ok() ? kExitOk : Fail(s);
}

// Builds the model from an imported spec (so that import never writes an invalid file) and
// writes it as YAML.
int WriteImported(absl::StatusOr<TopologySpec> spec, const std::string& out) {
  if (!spec.ok()) return Fail(spec.status());
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(*spec);
  if (!topo.ok()) return Fail(topo.status());
  absl::Status s = WriteOutput(out, WriteTopologyYaml(**topo));
  return s.ok() ? kExitOk : Fail(s);
}

struct SlurmImportArgs {
  std::string topology_conf;
  std::string topology_yaml;
  std::string blocks = "nvlink";  // --blocks: what a topology/block block is
  std::string gres_conf;
  std::vector<std::string> models;  // --model NAME=NVLINK_GBPS,PCIE_GBPS
  std::string slurm_conf_dir;       // --slurm-conf-dir: where relative Include paths are read
  SlurmImportOptions options;
  TopologyLimits limits;
  std::string out = "-";
};

int ImportSlurmFiles(const SlurmImportArgs& args) {
  SlurmImportOptions options = args.options;
  for (const std::string& text : args.models) {
    absl::StatusOr<GpuModelSpec> model = ParseModelOption(text);
    if (!model.ok()) return Fail(model.status());
    options.models.push_back(*std::move(model));
  }
  options.blocks = args.blocks == "fabric" ? SlurmImportOptions::Blocks::kFabric
                                           : SlurmImportOptions::Blocks::kNvlink;
  // Include lines name files as Slurm finds them: relative to slurm.conf's directory.
  options.includes.read = [](const std::string& path) { return ReadFileToString(path); };
  options.includes.dir = args.slurm_conf_dir;
  bool yaml = !args.topology_yaml.empty();
  if (yaml == !args.topology_conf.empty()) {
    return Fail(absl::InvalidArgumentError(
        "give one topology file: --topology topology.conf (topology/tree or topology/block) or "
        "--topology-yaml topology.yaml (Slurm 25.05+)"));
  }
  const std::string& topology_file = yaml ? args.topology_yaml : args.topology_conf;
  absl::StatusOr<std::string> topo_text = ReadFileToString(topology_file);
  if (!topo_text.ok()) return Fail(topo_text.status());
  std::string gres_text;
  if (!args.gres_conf.empty()) {
    absl::StatusOr<std::string> g = ReadFileToString(args.gres_conf);
    if (!g.ok()) return Fail(g.status());
    gres_text = *std::move(g);
  }
  absl::StatusOr<SlurmImport> imported =
      yaml ? ImportSlurmTopologyYaml(*topo_text, topology_file, gres_text, args.gres_conf, options,
                                     args.limits)
           : ImportSlurmWithNotes(*topo_text, topology_file, gres_text, args.gres_conf, options,
                                  args.limits);
  if (!imported.ok()) return Fail(imported.status());
  for (const std::string& note : imported->notes) std::cerr << note << "\n";
  return WriteImported(std::move(imported->spec), args.out);
}

struct SmiImportArgs {
  std::string file;
  std::string node;
  std::string model = "H100";
  TopologyLimits limits;
  std::string out = "-";
};

int ImportSmi(const SmiImportArgs& args) {
  absl::StatusOr<std::string> text = ReadFileToString(args.file);
  if (!text.ok()) return Fail(text.status());
  return WriteImported(ImportNvidiaSmi(*text, args.file, args.node, args.model, args.limits),
                       args.out);
}

struct ExportArgs {
  std::string file;
  std::string out_dir = ".";
  TopologyLimits limits;
  std::string slurm_release;  // "24.11" or "24.11.7"; empty: Links= as before 24.05
  bool force = false;
};

// Slurm before 23.11 has no topology/block.
bool SlurmHasBlocks(int major, int minor) { return major > 23 || (major == 23 && minor >= 11); }

// Links= or not, and the block description's file, for the Slurm release the files are for.
absl::StatusOr<SlurmExportOptions> ExportOptionsFor(const std::string& release) {
  SlurmExportOptions options;
  // No release: Links= and a topology-block.conf with BlockSizes= (Slurm 24.05 and later; 23.11
  // reads BlockLevels= instead, before 23.11 there is no topology/block).
  if (release.empty()) return options;
  std::vector<std::string> parts = absl::StrSplit(release, '.');
  int major = 0, minor = 0;
  bool ok = (parts.size() == 2 || parts.size() == 3);
  for (const std::string& p : parts) {
    ok =
        ok && !p.empty() && p.size() <= 3 && p.find_first_not_of("0123456789") == std::string::npos;
  }
  ok =
      ok && absl::SimpleAtoi(parts[0], &major) && absl::SimpleAtoi(parts[1], &minor) && major >= 17;
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--slurm-release ", release, ": give the Slurm release as MAJOR.MINOR, e.g. 24.11"));
  }
  options.links = SlurmLinksHelp(major, minor);
  options.blocks = SlurmReadsTopologyYaml(major, minor) ? SlurmExportOptions::Blocks::kYaml
                   : SlurmHasBlocks(major, minor)       ? SlurmExportOptions::Blocks::kConf
                                                        : SlurmExportOptions::Blocks::kNone;
  options.block_levels = major == 23 && minor == 11;  // BlockSizes= came with 24.05
  return options;
}

// An existing file with other content is replaced only with --force: a site's gres.conf
// holds AutoDetect, MPS and other lines nvlplace does not write.
absl::Status CheckOverwrite(const std::string& path, const std::string& text, bool force) {
  std::error_code ec;
  if (force || !std::filesystem::exists(path, ec)) return absl::OkStatus();
  absl::StatusOr<std::string> old = ReadFileToString(path);
  if (old.ok() && *old == text) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      path,
      " exists with other content: nvlplace does not merge it (AutoDetect=, MPS and "
      "other lines would be lost); write to another --out-dir and merge by hand, or give "
      "--force to replace it"));
}

int ExportSlurmFiles(const ExportArgs& args) {
  absl::StatusOr<SlurmExportOptions> options = ExportOptionsFor(args.slurm_release);
  if (!options.ok()) return Fail(options.status());
  absl::StatusOr<std::shared_ptr<const Topology>> topo = LoadTopologyFile(args.file, args.limits);
  if (!topo.ok()) return Fail(topo.status());
  if (absl::Status ok = CheckSlurmExportable(**topo); !ok.ok()) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat(args.file, ": cannot be written as Slurm's files: ", ok.message())));
  }
  if (absl::Status ok = CheckSlurmBlockExport(**topo, *options); !ok.ok()) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(args.file, ": cannot be written for Slurm ",
                                                        args.slurm_release, ": ", ok.message())));
  }
  size_t gres_bytes = ExportedGresBytes(**topo, *options);
  if (gres_bytes > limits::kMaxConfigBytes) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat(args.file, ": its gres.conf would take ", gres_bytes,
                     " bytes (a line per GPU, each listing its node's GPUs), more than the ",
                     limits::kMaxConfigBytes >> 20,
                     " MiB nvlplace reads back; describe fewer GPU shapes (islands) per model")));
  }
  std::error_code ec;
  std::filesystem::create_directories(args.out_dir, ec);
  if (ec)
    return Fail(absl::PermissionDeniedError(
        absl::StrCat("cannot create ", args.out_dir, ": ", ec.message())));
  SlurmFiles files = ExportSlurm(**topo, *options);
  // The files to write, by name: the block description only for a cluster with NVL72 racks.
  std::vector<std::pair<std::string, const std::string*>> out = {
      {"topology.conf", &files.topology_conf}, {"gres.conf", &files.gres_conf}};
  if (!files.block_conf.empty()) out.emplace_back("topology-block.conf", &files.block_conf);
  if (!files.topology_yaml.empty()) out.emplace_back("topology.yaml", &files.topology_yaml);
  std::vector<std::string> paths;
  paths.reserve(out.size());
  for (const auto& [name, text] : out) {
    paths.push_back((std::filesystem::path(args.out_dir) / name).string());
  }
  absl::Status s;
  for (size_t i = 0; i < out.size() && s.ok(); ++i) {
    s = CheckOverwrite(paths[i], *out[i].second, args.force);
  }
  for (size_t i = 0; i < out.size() && s.ok(); ++i) s = WriteOutput(paths[i], *out[i].second);
  if (!s.ok()) return Fail(s);
  std::string last = paths.back();
  paths.pop_back();
  std::cout << "wrote " << absl::StrJoin(paths, ", ") << " and " << last
            << (options->links ? "" : " (no Links=: see the comment at the top of gres.conf)")
            << "\n";
  if (!files.block_conf.empty()) {
    std::cout << "topology-block.conf is topology.conf for TopologyPlugin=topology/block "
                 "(NVLink domains as blocks): use it in place of topology.conf\n";
  }
  bool multi_node = std::any_of((*topo)->domains().begin(), (*topo)->domains().end(),
                                [](const NvlDomain& d) { return d.multi_node; });
  if (options->blocks == SlurmExportOptions::Blocks::kNone && multi_node) {
    std::cout << "Slurm " << args.slurm_release
              << " has no topology/block (it came with 23.11): no topology-block.conf is "
                 "written; the NVLink domains are in topology.conf only (as topology/tree "
                 "switches where a leaf holds whole domains)\n";
  }
  if (!files.topology_yaml.empty()) {
    std::cout << "topology.yaml (Slurm 25.05+) replaces topology.conf: bind partitions with "
                 "Topology=nvlink (blocks) or Topology=fabric (tree) in slurm.conf\n";
  }
  return kExitOk;
}

}  // namespace

void AddTopologyCommands(CLI::App& app, std::function<int()>* run) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto validate_limits = std::make_shared<TopologyLimits>();
  CLI::App* validate = app.add_subcommand(
      "validate", "Check cluster YAML files; errors read file:line:col: path: message");
  validate->add_option("files", *files, "cluster YAML files")->required();
  AddMaxGpusOption(validate, validate_limits.get());
  validate->callback([run, files, validate_limits] {
    *run = [files, validate_limits] { return Validate(*files, *validate_limits); };
  });

  auto show_file = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  auto show_limits = std::make_shared<TopologyLimits>();
  CLI::App* show =
      app.add_subcommand("show", "Describe a cluster: summary, JSON or canonical YAML");
  show->add_option("file", *show_file, "cluster YAML file")->required();
  show->add_option("--format", *format, "text (default), json (schema nvlplace.topology/1), yaml")
      ->check(CLI::IsMember({"text", "json", "yaml"}));
  AddMaxGpusOption(show, show_limits.get());
  show->callback([run, show_file, format, show_limits] {
    *run = [=] { return Show(*show_file, *format, *show_limits); };
  });

  CLI::App* import =
      app.add_subcommand("import", "Build a cluster YAML from Slurm or nvidia-smi files");
  import->require_subcommand(1);
  auto slurm = std::make_shared<SlurmImportArgs>();
  CLI::App* isl = import->add_subcommand(
      "slurm", "Import topology.conf or topology.yaml (tree, block) and gres.conf");
  CLI::Option* conf = isl->add_option("--topology", slurm->topology_conf,
                                      "Slurm topology.conf: SwitchName= lines (topology/tree) or "
                                      "BlockName= lines (topology/block)");
  isl->add_option("--topology-yaml", slurm->topology_yaml,
                  "Slurm topology.yaml (25.05+): a tree topology gives the switches, a block "
                  "topology the blocks")
      ->excludes(conf);
  isl->add_option("--topology-name", slurm->options.topology_names,
                  "with --topology-yaml: the topology to import when the file has two of its kind "
                  "(tree, block); repeatable")
      ->take_all();
  isl->add_option("--blocks", slurm->blocks,
                  "what a block is: nvlink (default; a multi-node NVLink domain, such as an NVL72 "
                  "rack) or fabric (only a level of the fabric)")
      ->check(CLI::IsMember({"nvlink", "fabric"}));
  isl->add_option("--gres", slurm->gres_conf, "Slurm gres.conf with Name=gpu File= [Links=] lines");
  isl->add_option("--slurm-conf-dir", slurm->slurm_conf_dir,
                  "directory of slurm.conf, where Slurm reads a relative Include path of "
                  "topology.conf and gres.conf from (default: the directory of each file given)");
  isl->add_option("--gpus-per-node", slurm->options.gpus_per_node,
                  "GPUs per node when no gres.conf lists GPUs (with one, the nodes it leaves "
                  "out have none)");
  isl->add_option("--gpu-model", slurm->options.gpu_model, "GPU model when gres.conf has no Type=");
  isl->add_option("--nvlink-gbps", slurm->options.nvlink_gbps,
                  "NVLink GB/s per GPU of the --gpu-model model (default: from the table of "
                  "known models)");
  isl->add_option("--model", slurm->models,
                  "NAME=NVLINK_GBPS,PCIE_GBPS: a GPU model (gres.conf Type=) that nvlplace's "
                  "table does not know, or other figures for one it does; repeatable")
      ->take_all();
  isl->add_option("--name", slurm->options.name, "cluster name");
  AddMaxGpusOption(isl, &slurm->limits);
  isl->add_option("-o,--out", slurm->out, "output YAML file (default: stdout)");
  isl->callback([run, slurm] { *run = [slurm] { return ImportSlurmFiles(*slurm); }; });

  auto smi = std::make_shared<SmiImportArgs>();
  CLI::App* ism = import->add_subcommand("nvidia-smi", "Import one node from `nvidia-smi topo -m`");
  ism->add_option("file", smi->file, "saved output of nvidia-smi topo -m")->required();
  ism->add_option("--node", smi->node, "Slurm node name of that machine")->required();
  ism->add_option("--gpu-model", smi->model, "GPU model name");
  AddMaxGpusOption(ism, &smi->limits);
  ism->add_option("-o,--out", smi->out, "output YAML file (default: stdout)");
  ism->callback([run, smi] { *run = [smi] { return ImportSmi(*smi); }; });

  CLI::App* exp = app.add_subcommand("export", "Write Slurm files from a cluster YAML");
  exp->require_subcommand(1);
  auto ex = std::make_shared<ExportArgs>();
  CLI::App* esl = exp->add_subcommand(
      "slurm",
      "Write topology.conf and gres.conf (File=, Links=); with NVLink domains over several nodes "
      "also topology-block.conf (topology/block) or, for Slurm 25.05+, topology.yaml");
  esl->add_option("file", ex->file, "cluster YAML file")->required();
  esl->add_option("--out-dir", ex->out_dir, "directory for the files");
  esl->add_option("--slurm-release", ex->slurm_release,
                  "Slurm release the files are for (e.g. 24.11): from 24.05 on, gres.conf gets "
                  "no Links= (cons_tres there takes the least-linked GPU first); from 25.05 on, "
                  "the blocks go to topology.yaml instead of topology-block.conf; 23.11 gets "
                  "BlockLevels= for BlockSizes=, and before 23.11 (no topology/block) no block "
                  "file");
  esl->add_flag("--force", ex->force, "replace an existing file with other content");
  AddMaxGpusOption(esl, &ex->limits);
  esl->callback([run, ex] { *run = [ex] { return ExportSlurmFiles(*ex); }; });
}

}  // namespace nvlplace::cli
