// Fuzzes `nvidia-smi topo -m` import: ParseNvidiaSmiTopo (islands sorted and covering every
// GPU once), then ImportNvidiaSmi and Topology::Create as `nvlplace import nvidia-smi` does.
#include <string>
#include <vector>

#include "placement/formats/nvidia_smi.h"
#include "placement/model/topology.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvlplace;
  absl::string_view text = fuzz::AsText(data, size);
  auto islands = ParseNvidiaSmiTopo(text, "topo-m.txt");
  if (!islands.ok()) return 0;
  size_t gpus = 0;
  for (const auto& island : *islands) gpus += island.size();
  std::vector<int> seen(gpus, 0);
  for (size_t i = 0; i < islands->size(); ++i) {
    const std::vector<int>& island = (*islands)[i];
    FUZZ_CHECK(!island.empty(), "island %zu is empty", i);
    FUZZ_CHECK(std::is_sorted(island.begin(), island.end()), "island %zu not sorted", i);
    FUZZ_CHECK(i == 0 || (*islands)[i - 1][0] < island[0], "islands not sorted at %zu", i);
    for (int g : island) {
      FUZZ_CHECK(g >= 0 && static_cast<size_t>(g) < gpus, "GPU %d of %zu", g, gpus);
      FUZZ_CHECK(seen[g]++ == 0, "GPU %d in two islands", g);
    }
  }
  auto spec = ImportNvidiaSmi(text, "topo-m.txt", "box01", "H100");
  FUZZ_CHECK(spec.ok(), "parsed but not imported: %s", fuzz::Message(spec.status()).c_str());
  (void)Topology::Create(*spec);
  return 0;
}
