// Imports one node's NVLink islands from `nvidia-smi topo -m` output.
#ifndef NVLPLACE_PLACEMENT_FORMATS_NVIDIA_SMI_H_
#define NVLPLACE_PLACEMENT_FORMATS_NVIDIA_SMI_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/model/topology.h"

namespace nvlplace {

// Reads the GPU matrix of `nvidia-smi topo -m` (header "GPU0 GPU1 ... NIC0 ... CPU Affinity
// ..."; rows "GPUi X NV18 ... "). GPUs joined by NV# (any number of NVLinks) are in one
// island (transitively); PIX, PXB, PHB, NODE, SYS (SOC in old drivers) and "X" do not join.
// Columns may be separated by tabs or spaces; ANSI colour codes are dropped. NIC columns
// and rows (NICn or mlx5_n), the affinity columns and the legend after the matrix are
// ignored. Islands are returned sorted, each sorted. Errors are InvalidArgument
// "file:line: [row: ]message": no header, a GPU column out of order, a row with too few
// entries, an unknown entry, a GPU whose own entry is not X, a GPU row missing or repeated,
// more than limits::kMaxGpusPerNode GPU columns. Entries are echoed escaped (Printable).
absl::StatusOr<std::vector<std::vector<int>>> ParseNvidiaSmiTopo(absl::string_view text,
                                                                 const std::string& file);

// A one-node spec: `node` with the GPUs and islands of the matrix, under one leaf switch
// named "leaf0" (a cluster of one node must still be under a leaf). The cluster is named
// after the node, has the single tier "leaf", and the model's bandwidths are left to the
// table of known models (gpu_models.h; Topology::Create refuses a model it does not know).
// `node` and `gpu_model` must be valid names (CheckName); more GPUs than
// topology_limits.max_gpus are refused.
absl::StatusOr<TopologySpec> ImportNvidiaSmi(absl::string_view text, const std::string& file,
                                             const std::string& node, const std::string& gpu_model,
                                             const TopologyLimits& topology_limits = {});

// NVLink islands of a link matrix, the rule shared with gres.conf Links=: GPUs i and j are
// joined when links[i][j] >= 1 or links[j][i] >= 1; islands are the connected components,
// sorted by their lowest GPU, each sorted. links is square.
std::vector<std::vector<int>> NvlinkIslands(const std::vector<std::vector<int>>& links);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_FORMATS_NVIDIA_SMI_H_
