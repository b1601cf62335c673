// The Slurm round trips the slurm_import and slurm_topology_yaml fuzz targets check: export a
// model as Slurm files (tree, block, topology.yaml), import each, and compare with the model.
#ifndef NVLPLACE_TESTS_FUZZ_SLURM_ROUND_TRIP_H_
#define NVLPLACE_TESTS_FUZZ_SLURM_ROUND_TRIP_H_

#include <string>
#include <vector>

#include "placement/formats/slurm_export.h"
#include "placement/formats/slurm_import.h"
#include "placement/model/hostlist.h"
#include "placement/model/topology.h"
#include "tests/fuzz/fuzz_common.h"

namespace nvlplace::fuzz {

// ExportSlurm's documented precondition: no ',' or '"' in any name, and switch and NVLink
// domain names that a hostlist can hold (Slurm lists them in Switches= and its block lists).
inline bool Exportable(const Topology& topo) {
  auto bad = [](const std::string& s) { return s.find_first_of(",\"") != std::string::npos; };
  auto unlisted = [&](const std::string& s) {
    absl::StatusOr<std::vector<std::string>> alone = ExpandHostlist(s);
    return bad(s) || !alone.ok() || alone->size() != 1 || (*alone)[0] != s;
  };
  if (bad(topo.name())) return false;
  for (const auto& t : topo.tiers())
    if (bad(t)) return false;
  for (const auto& m : topo.gpu_models())
    if (bad(m.name)) return false;
  for (const auto& n : topo.nodes())
    if (bad(n.name)) return false;
  for (const auto& d : topo.domains())
    if (d.multi_node ? unlisted(d.name) : bad(d.name)) return false;
  for (const auto& s : topo.switches())
    if (unlisted(s.name)) return false;
  return true;
}

// What one export gives back: imported (with `options`), built and compared with `topo`.
inline void ExpectSameBack(const Topology& topo, const absl::StatusOr<SlurmImport>& back,
                           const char* what, const std::string& text, const std::string& gres) {
  FUZZ_CHECK(back.ok(), "%s does not import: %s\n%s\n%s", what, Message(back.status()).c_str(),
             text.c_str(), gres.c_str());
  auto topo2 = Topology::Create(back->spec);
  FUZZ_CHECK(topo2.ok(), "%s is not a valid cluster: %s\n%s\n%s", what,
             Message(topo2.status()).c_str(), text.c_str(), gres.c_str());
  absl::Status same = CompareTopologies(topo, **topo2);
  FUZZ_CHECK(same.ok(), "export/import through %s changed the model: %s\n%s\n%s", what,
             Message(same).c_str(), text.c_str(), gres.c_str());
}

// Every Slurm export of `topo` must give it back: topology.conf (tree) with gres.conf, and for
// a cluster with multi-node NVLink domains topology-block.conf and topology.yaml, each alone.
inline void CheckSlurmRoundTrips(const Topology& topo, const SlurmImportOptions& options) {
  if (!Exportable(topo)) return;
  SlurmFiles files = ExportSlurm(topo);
  ExpectSameBack(topo,
                 ImportSlurmWithNotes(files.topology_conf, "exported-topology.conf",
                                      files.gres_conf, "exported-gres.conf", options),
                 "topology.conf", files.topology_conf, files.gres_conf);
  if (files.block_conf.empty()) return;
  ExpectSameBack(
      topo, ImportSlurmWithNotes(files.block_conf, "exported-topology-block.conf", "", "", options),
      "topology-block.conf", files.block_conf, "");
  SlurmExportOptions yaml;
  yaml.blocks = SlurmExportOptions::Blocks::kYaml;
  std::string text = ExportSlurm(topo, yaml).topology_yaml;
  ExpectSameBack(topo, ImportSlurmTopologyYaml(text, "exported-topology.yaml", "", "", options),
                 "topology.yaml", text, "");
}

}  // namespace nvlplace::fuzz

#endif  // NVLPLACE_TESTS_FUZZ_SLURM_ROUND_TRIP_H_
