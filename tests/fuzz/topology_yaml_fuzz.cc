// Fuzzes the cluster YAML: ParseTopologyYaml, Topology::Create, and on success the round trip
// WriteTopologyYaml -> parse -> Create, which must give an equal model (CompareTopologies).
#include <string>

#include "placement/formats/topology_yaml.h"
#include "placement/model/topology.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvlplace;
  auto spec = ParseTopologyYaml(fuzz::AsText(data, size), "fuzz.yaml", fuzz::Limits());
  if (!spec.ok()) return 0;
  auto topo = Topology::Create(*spec);
  if (!topo.ok()) return 0;
  std::string written = WriteTopologyYaml(**topo);
  auto spec2 = ParseTopologyYaml(written, "written.yaml");
  FUZZ_CHECK(spec2.ok(), "written YAML does not parse: %s\n%s",
             fuzz::Message(spec2.status()).c_str(), written.c_str());
  auto topo2 = Topology::Create(*spec2);
  FUZZ_CHECK(topo2.ok(), "written YAML is not a valid cluster: %s\n%s",
             fuzz::Message(topo2.status()).c_str(), written.c_str());
  absl::Status same = CompareTopologies(**topo, **topo2);
  FUZZ_CHECK(same.ok(), "round trip changed the model: %s\n%s", fuzz::Message(same).c_str(),
             written.c_str());
  return 0;
}
