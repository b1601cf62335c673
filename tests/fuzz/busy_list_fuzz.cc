// Fuzzes LoadBusyList on lab-islands: an error leaves the state unchanged, success only marks;
// and ReadGpusInOrder on the same text: it accepts exactly the texts that give no GPU twice
// among those LoadBusyList accepts, and then lists each GPU that LoadBusyList marks once.
#include <memory>
#include <vector>

#include "placement/formats/busy_list.h"
#include "placement/model/cluster_state.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvlplace;
  static const std::shared_ptr<const Topology> topo = fuzz::LabIslands();
  ClusterState state(topo);
  absl::Status s = LoadBusyList(fuzz::AsText(data, size), "fuzz.busy", &state);
  int free_now = 0;
  for (GpuId g = 0; g < topo->num_gpus(); ++g) free_now += state.busy(g) ? 0 : 1;
  FUZZ_CHECK(free_now == state.num_free(), "num_free %d but %d GPUs free", state.num_free(),
             free_now);
  if (!s.ok()) {
    FUZZ_CHECK(state.num_free() == topo->num_gpus(), "error changed the state: %s",
               fuzz::Message(s).c_str());
  }
  for (NodeId n = 0; n < topo->num_nodes(); ++n) {
    int node_free = 0;
    for (GpuId g : topo->nodes()[n].gpus) node_free += state.busy(g) ? 0 : 1;
    FUZZ_CHECK(node_free == state.free_on_node(n), "node %d: %d free, counted %d", n,
               state.free_on_node(n), node_free);
  }
  absl::StatusOr<std::vector<GpuId>> order =
      ReadGpusInOrder(fuzz::AsText(data, size), "fuzz.busy", *topo);
  if (!s.ok()) {
    FUZZ_CHECK(!order.ok(), "ReadGpusInOrder took what LoadBusyList refused: %s",
               fuzz::Message(s).c_str());
  } else if (order.ok()) {
    std::vector<bool> listed(topo->num_gpus(), false);
    for (GpuId g : *order) {
      FUZZ_CHECK(g >= 0 && g < topo->num_gpus() && !listed[g], "GPU %d listed twice or unknown", g);
      listed[g] = true;
    }
    for (GpuId g = 0; g < topo->num_gpus(); ++g) {
      FUZZ_CHECK(listed[g] == state.busy(g), "GPU %d: listed %d, marked %d", g,
                 static_cast<int>(listed[g]), static_cast<int>(state.busy(g)));
    }
  } else {
    FUZZ_CHECK(fuzz::Message(order.status()).find("is given twice") != std::string::npos,
               "ReadGpusInOrder refused what LoadBusyList took: %s",
               fuzz::Message(order.status()).c_str());
  }
  return 0;
}
