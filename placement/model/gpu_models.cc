// The GPU models nvlplace knows, with their published per-GPU NVLink and PCIe bandwidths.
#include "placement/model/gpu_models.h"

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"

namespace nvlplace {

const std::vector<KnownGpuModel>& KnownGpuModels() {
  // From NVIDIA's datasheets. SXM parts reach their peers through NVSwitch; PCIe cards with
  // an NVLink bridge join GPUs in pairs (islands of two) at the figure given.
  static const auto* table = new std::vector<KnownGpuModel>{
      {"B200", 1800, 128, "NVLink 5, 18 links"},
      {"B100", 1800, 128, "NVLink 5, 18 links"},
      {"GB200", 1800, 128, "NVLink 5, 18 links (NVL72 rack domain)"},
      {"H200", 900, 128, "NVLink 4, 18 links (SXM)"},
      {"H100", 900, 128, "NVLink 4, 18 links (SXM5)"},
      {"H100-SXM", 900, 128, "NVLink 4, 18 links"},
      {"H100-NVL", 600, 128, "NVLink bridge, pairs"},
      {"H100-PCIe", 600, 128, "NVLink bridge, pairs"},
      {"H800", 400, 128, "NVLink 4, 8 links (SXM)"},
      {"A100", 600, 64, "NVLink 3, 12 links (SXM4)"},
      {"A100-SXM", 600, 64, "NVLink 3, 12 links"},
      {"A100-PCIe", 600, 64, "NVLink bridge, pairs"},
      {"A800", 400, 64, "NVLink 3, 8 links (SXM)"},
      {"A30", 200, 64, "NVLink bridge, pairs"},
      {"V100", 300, 32, "NVLink 2, 6 links (SXM2)"},
      {"L40S", 0, 64, "no NVLink"},
      {"L40", 0, 64, "no NVLink"},
      {"L4", 0, 64, "no NVLink"},
      {"A10", 0, 64, "no NVLink"},
      {"T4", 0, 32, "no NVLink"},
  };
  return *table;
}

const KnownGpuModel* FindKnownGpuModel(absl::string_view name) {
  for (const KnownGpuModel& m : KnownGpuModels()) {
    if (absl::EqualsIgnoreCase(m.name, name)) return &m;
  }
  return nullptr;
}

std::string KnownGpuModelNames() {
  return absl::StrJoin(KnownGpuModels(), ", ", [](std::string* out, const KnownGpuModel& m) {
    out->append(m.name.data(), m.name.size());
  });
}

}  // namespace nvlplace
