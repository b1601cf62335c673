// The GPU models nvlplace knows, with their published per-GPU NVLink and PCIe bandwidths.
#ifndef NVLPLACE_PLACEMENT_MODEL_GPU_MODELS_H_
#define NVLPLACE_PLACEMENT_MODEL_GPU_MODELS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace nvlplace {

// One known model. Bandwidths are per GPU, GB/s, both directions together (as NVIDIA's
// datasheets give them: H100 SXM "NVLink 900 GB/s", "PCIe Gen5 128 GB/s").
struct KnownGpuModel {
  absl::string_view name;  // as the table spells it: "H100-PCIe"
  double nvlink_gbps;      // 0: the model has no NVLink (each GPU is its own island)
  double pcie_gbps;        // the GPU's host link: Gen5 x16 128, Gen4 x16 64, Gen3 x16 32
  absl::string_view note;  // where the NVLink figure comes from, for the docs and `show`
};

// Every known model, in the order of the table (by generation, newest first).
const std::vector<KnownGpuModel>& KnownGpuModels();

// The known model of that name, compared without regard to case ("h100-pcie" finds
// "H100-PCIe", as Slurm's gres Type= is matched); nullptr when the table does not have it.
const KnownGpuModel* FindKnownGpuModel(absl::string_view name);

// "B200, B100, GB200, ..." for messages.
std::string KnownGpuModelNames();

// PCIe bandwidth of a model that the table does not know and whose pcie_gbps is not given:
// Gen4 x16, GB/s both directions.
inline constexpr double kDefaultPcieGbps = 64.0;

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_MODEL_GPU_MODELS_H_
