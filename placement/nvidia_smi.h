// Imports one node's NVLink islands from `nvidia-smi topo -m` output.
#ifndef NVLPLACE_PLACEMENT_NVIDIA_SMI_H_
#define NVLPLACE_PLACEMENT_NVIDIA_SMI_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "placement/topology.h"

namespace nvlplace {

// Reads the GPU matrix of `nvidia-smi topo -m` (header "GPU0 GPU1 ... NIC0 ... CPU Affinity
// ..."; rows "GPUi X NV18 ... "). GPUs joined by NV# (any number of NVLinks) are in one
// island (transitively); PIX, PXB, PHB, NODE, SYS and "X" do not join. NIC columns and rows
// and the legend are ignored. Errors name file:line.
absl::StatusOr<std::vector<std::vector<int>>> ParseNvidiaSmiTopo(absl::string_view text,
                                                                  const std::string& file);

// A one-node spec: `node` with the GPUs and islands of the matrix, under one leaf switch
// named "leaf0" (a cluster of one node must still be under a leaf).
absl::StatusOr<TopologySpec> ImportNvidiaSmi(absl::string_view text, const std::string& file,
                                              const std::string& node,
                                              const std::string& gpu_model);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_NVIDIA_SMI_H_
