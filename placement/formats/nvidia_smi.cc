// Reads the GPU connection matrix of `nvidia-smi topo -m` into NVLink islands.
#include "placement/formats/nvidia_smi.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "placement/model/hostlist.h"
#include "placement/model/limits.h"

namespace nvlplace {
namespace {

absl::Status ErrorAt(const std::string& file, int line, absl::string_view row,
                     absl::string_view message) {
  return absl::InvalidArgumentError(FormatAt(SourceLoc{file, line, 0, Printable(row)}, message));
}

// Drops ANSI escape sequences ("\x1b[1m") that nvidia-smi prints on a terminal, and a '\r'.
std::string StripAnsi(absl::string_view line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      i += 2;
      while (i < line.size() && !absl::ascii_isalpha(line[i])) ++i;
      continue;
    }
    if (line[i] != '\r') out += line[i];
  }
  return out;
}

std::vector<std::string> Tokens(absl::string_view line) {
  return absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
}

// "GPU3" -> 3; -1 for anything else.
int GpuIndex(absl::string_view token) {
  int index;
  if (!absl::ConsumePrefix(&token, "GPU") || token.empty()) return -1;
  if (!absl::SimpleAtoi(token, &index) || index < 0 || token[0] == '+') return -1;
  return index;
}

// A matrix entry: -1 for X (self), n for NVn, 0 for a PCIe or SMP path.
absl::StatusOr<int> ParseEntry(absl::string_view token) {
  if (token == "X") return -1;
  for (absl::string_view pcie : {"PIX", "PXB", "PHB", "NODE", "SYS", "SOC"}) {
    if (token == pcie) return 0;
  }
  int links;
  if (absl::ConsumePrefix(&token, "NV") && absl::SimpleAtoi(token, &links) && links >= 1) {
    return links;
  }
  return absl::InvalidArgumentError("unknown");
}

// Affinity columns hold "0-55,112-167", "1" or "N/A": a row whose entries run into them is
// short, not wrong.
bool LooksLikeAffinity(absl::string_view token) {
  return token == "N/A" || std::all_of(token.begin(), token.end(), [](char c) {
           return absl::ascii_isdigit(c) || c == ',' || c == '-';
         });
}

// The device columns of the header: every token before "CPU Affinity" (or "NUMA Affinity",
// "GPU NUMA ID"). The GPU columns must come first, as GPU0, GPU1, ...
absl::StatusOr<int> HeaderGpus(const std::vector<std::string>& header, int* devices,
                               const std::string& file, int line) {
  *devices = 0;
  int gpus = 0;
  for (const std::string& token : header) {
    if (token == "CPU" || token == "NUMA" || token == "GPU") break;
    ++*devices;
    int index = GpuIndex(token);
    if (index < 0) continue;
    if (index != gpus || *devices != gpus + 1) {
      return ErrorAt(
          file, line, "",
          absl::StrCat("header column '", Printable(token), "' is out of order; expected GPU", gpus,
                       " as column ", *devices));
    }
    if (gpus == limits::kMaxGpusPerNode) {
      return ErrorAt(file, line, "",
                     absl::StrCat("more than ", limits::kMaxGpusPerNode,
                                  " GPU columns; a node has at most that many GPUs"));
    }
    ++gpus;
  }
  if (gpus == 0) {
    return ErrorAt(file, line, "",
                   "expected the header of `nvidia-smi topo -m` (GPU0 GPU1 ... CPU Affinity)");
  }
  return gpus;
}

// Parses row "GPUi X NV18 ..." into links[i] (GPU columns only).
absl::Status ParseRow(const std::vector<std::string>& tokens, int gpu, int gpus, int devices,
                      const std::string& file, int line, std::vector<int>* row) {
  const std::string& label = tokens[0];
  row->assign(gpus, 0);
  for (int col = 0; col < devices; ++col) {
    if (col + 1 >= static_cast<int>(tokens.size()) || LooksLikeAffinity(tokens[col + 1])) {
      return ErrorAt(
          file, line, label,
          absl::StrCat("the row has ", col, " entries but the header has ", devices, " devices"));
    }
    absl::StatusOr<int> entry = ParseEntry(tokens[col + 1]);
    if (!entry.ok()) {
      return ErrorAt(file, line, label,
                     absl::StrCat("unknown entry '", Printable(tokens[col + 1]), "' in column ",
                                  col + 1, "; expected X, NV#, PIX, PXB, PHB, NODE or SYS"));
    }
    if ((col == gpu) != (*entry == -1)) {
      return ErrorAt(file, line, label,
                     col == gpu ? absl::StrCat("its own column holds '", Printable(tokens[col + 1]),
                                               "'; expected X")
                                : absl::StrCat("X in column ", col + 1, " is not its own"));
    }
    if (col < gpus) (*row)[col] = *entry;
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::vector<int>> NvlinkIslands(const std::vector<std::vector<int>>& links) {
  int n = static_cast<int>(links.size());
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j || links[i][j] < 1) continue;
      int a = find(i), b = find(j);
      parent[std::max(a, b)] = std::min(a, b);
    }
  }
  std::vector<std::vector<int>> islands;
  std::vector<int> island_of(n, -1);
  for (int i = 0; i < n; ++i) {
    int root = find(i);
    if (island_of[root] < 0) {
      island_of[root] = static_cast<int>(islands.size());
      islands.emplace_back();
    }
    islands[island_of[root]].push_back(i);
  }
  return islands;
}

absl::StatusOr<std::vector<std::vector<int>>> ParseNvidiaSmiTopo(absl::string_view text,
                                                                 const std::string& file) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  size_t at = 0;
  while (at < lines.size() && Tokens(StripAnsi(lines[at])).empty()) ++at;
  if (at == lines.size()) return ErrorAt(file, 0, "", "no `nvidia-smi topo -m` matrix found");
  int devices = 0;
  absl::StatusOr<int> gpus =
      HeaderGpus(Tokens(StripAnsi(lines[at])), &devices, file, static_cast<int>(at) + 1);
  if (!gpus.ok()) return gpus.status();
  std::vector<std::vector<int>> links(*gpus);
  std::vector<int> row_line(*gpus, 0);
  for (++at; at < lines.size(); ++at) {
    std::vector<std::string> tokens = Tokens(StripAnsi(lines[at]));
    if (tokens.empty() || absl::StartsWith(tokens[0], "Legend")) break;
    int gpu = GpuIndex(tokens[0]);
    if (gpu < 0) continue;  // a NIC row
    int line = static_cast<int>(at) + 1;
    if (gpu >= *gpus) {
      return ErrorAt(file, line, tokens[0], absl::StrCat("the header has ", *gpus, " GPUs"));
    }
    if (row_line[gpu] > 0) {
      return ErrorAt(file, line, tokens[0],
                     absl::StrCat("the row is repeated (first on line ", row_line[gpu], ")"));
    }
    row_line[gpu] = line;
    absl::Status row = ParseRow(tokens, gpu, *gpus, devices, file, line, &links[gpu]);
    if (!row.ok()) return row;
  }
  for (int g = 0; g < *gpus; ++g) {
    if (row_line[g] == 0) {
      return ErrorAt(file, static_cast<int>(at) + 1, "", absl::StrCat("no row for GPU", g));
    }
  }
  return NvlinkIslands(links);
}

absl::StatusOr<TopologySpec> ImportNvidiaSmi(absl::string_view text, const std::string& file,
                                             const std::string& node, const std::string& gpu_model,
                                             const TopologyLimits& topology_limits) {
  absl::Status name_ok = CheckName(node, "node name");
  if (name_ok.ok()) name_ok = CheckName(gpu_model, "GPU model name");
  if (!name_ok.ok()) return name_ok;
  absl::StatusOr<std::vector<std::vector<int>>> islands = ParseNvidiaSmiTopo(text, file);
  if (!islands.ok()) return islands.status();
  size_t gpus = 0;
  for (const auto& island : *islands) gpus += island.size();
  if (static_cast<int64_t>(gpus) > topology_limits.max_gpus) {
    return absl::InvalidArgumentError(
        FormatAt(SourceLoc{file, 0, 0, ""},
                 absl::StrCat("the node has ", gpus, " GPUs, more than the limit of ",
                              topology_limits.max_gpus, " GPUs")));
  }
  TopologySpec spec;
  spec.loc.file = file;
  spec.name = node;
  spec.tiers = {"leaf"};
  GpuModelSpec model;
  model.name = gpu_model;
  spec.gpu_models.push_back(model);
  NodeGroupSpec group;
  group.names = {node};
  for (const auto& island : *islands) group.gpus += static_cast<int>(island.size());
  group.model = gpu_model;
  if (islands->size() > 1) group.islands = *std::move(islands);
  group.loc.file = file;
  spec.node_groups.push_back(std::move(group));
  SwitchSpec leaf;
  leaf.name = "leaf0";
  leaf.tier = "leaf";
  leaf.nodes = {node};
  spec.switches.push_back(std::move(leaf));
  return spec;
}

}  // namespace nvlplace
