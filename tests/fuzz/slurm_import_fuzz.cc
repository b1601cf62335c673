// Fuzzes ImportSlurm: topology.conf, a 0 byte, then gres.conf; on a valid model the round trip
// ExportSlurm -> ImportSlurm must give an equal one (CompareTopologies).
#include <string>

#include "placement/formats/slurm_export.h"
#include "placement/formats/slurm_import.h"
#include "placement/model/topology.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

// ExportSlurm's documented precondition: no ',' or '"' in any name.
bool Exportable(const nvlplace::Topology& topo) {
  auto bad = [](const std::string& s) { return s.find_first_of(",\"") != std::string::npos; };
  if (bad(topo.name())) return false;
  for (const auto& t : topo.tiers())
    if (bad(t)) return false;
  for (const auto& m : topo.gpu_models())
    if (bad(m.name)) return false;
  for (const auto& n : topo.nodes())
    if (bad(n.name)) return false;
  for (const auto& d : topo.domains())
    if (bad(d.name)) return false;
  for (const auto& s : topo.switches())
    if (bad(s.name)) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvlplace;
  absl::string_view text = fuzz::AsText(data, size);
  size_t cut = text.find('\0');
  absl::string_view topology_conf = text.substr(0, cut);
  absl::string_view gres_conf = cut == absl::string_view::npos ? "" : text.substr(cut + 1);
  SlurmImportOptions options;
  options.gpus_per_node = 8;
  auto spec = ImportSlurm(topology_conf, "topology.conf", gres_conf, "gres.conf", options);
  if (!spec.ok()) return 0;
  auto topo = Topology::Create(*spec);
  if (!topo.ok() || !Exportable(**topo)) return 0;
  SlurmFiles files = ExportSlurm(**topo);
  auto spec2 = ImportSlurm(files.topology_conf, "exported-topology.conf", files.gres_conf,
                           "exported-gres.conf", options);
  FUZZ_CHECK(spec2.ok(), "exported files do not import: %s\n%s\n%s",
             fuzz::Message(spec2.status()).c_str(), files.topology_conf.c_str(),
             files.gres_conf.c_str());
  auto topo2 = Topology::Create(*spec2);
  FUZZ_CHECK(topo2.ok(), "exported files are not a valid cluster: %s\n%s\n%s",
             fuzz::Message(topo2.status()).c_str(), files.topology_conf.c_str(),
             files.gres_conf.c_str());
  absl::Status same = CompareTopologies(**topo, **topo2);
  FUZZ_CHECK(same.ok(), "export/import changed the model: %s\n%s\n%s", fuzz::Message(same).c_str(),
             files.topology_conf.c_str(), files.gres_conf.c_str());
  return 0;
}
