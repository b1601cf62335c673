// The placement line: what the select plugin says of one job at one step, in slurmctld's log
// and in the job's SystemComment, as versioned key=value fields (plugin/README.md, "The
// placement line"). Written here only (Format); read only by contrib/cluster/placement_log.py.
// No Slurm header.
#ifndef NVLPLACE_PLUGIN_PLACEMENT_LINE_H_
#define NVLPLACE_PLUGIN_PLACEMENT_LINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace nvlplace::plugin {

// v= of every line. Adding a field keeps it; changing or removing one, or the quoting rule,
// raises it (readers refuse a version they do not know).
inline constexpr int kPlacementLineVersion = 1;

enum class Event {
  kPlaced,            // Slurm allocates exactly the decision
  kDiffers,           // a soft job runs, but Slurm allocates other GPUs than decided
  kRejected,          // a hard job's node set: cons_tres would allocate other GPUs; next one
  kPlacedByConsTres,  // cons_tres refused every node set; its own choice, as a relaxation
  kConsTres,          // left to cons_tres from the start
  kWaiting,           // a hard constraint: the job waits
  kHeld,              // options nvlplace cannot honour: the job is held
  kRefused,           // refused at submit (a bad request, or one that can never run here)
  kWillRun,           // backfill: the job fits once running jobs end (start_in=)
  kCandidateRefused,  // cons_tres refused node set `candidate`
  kCandidateTaken,    // will_run / test_only: cons_tres took node set `candidate`
};
// "placed", "differs", "rejected", "placed-by-cons_tres", "cons_tres", "waiting", "held",
// "refused", "will-run", "candidate-refused", "candidate-taken".
const char* EventName(Event event);

// GPUs on one node: "node03:4-7"; no index ("node03:no-gpu-index"): slurmctld has none.
struct NodeGpus {
  std::string node;
  std::vector<int> gpus;
  bool operator==(const NodeGpus& o) const { return node == o.node && gpus == o.gpus; }
};

// The request, resolved against the topology.
struct LineRequest {
  int gpus = 0;
  int nodes = 0;  // 0: any number
  int tp = 1, pp = 1, dp = 1;
  std::string nvl = "strict";  // strict | prefer | off
  std::string max_tier;        // "": none
  bool max_tier_required = true;
  std::string model;  // "": any
  bool exclusive = false;
};

// A node set the engine chose, and how far it spreads.
struct LinePlacement {
  std::vector<NodeGpus> gpus;        // by node, in rank order of first use
  std::vector<std::string> domains;  // NVLink domains, in rank order of first use
  int span_domains = 0, span_nodes = 0;
  std::string span_tier;  // "node", a fabric tier, or "disconnected"
  double score = 0;
  std::string origin;
  std::string locality_traded;  // "": none
};

struct PlacementLine {
  Event event = Event::kPlaced;
  std::string mode;                    // "": run_now; test_only, will_run
  std::optional<LineRequest> request;  // none when it could not be resolved
  std::string why;                     // "": none
  std::optional<int64_t> start_in;     // kWillRun: seconds from now
  std::optional<LinePlacement> placement;
  std::optional<std::vector<NodeGpus>> slurm_gpus;       // what Slurm allocates (would allocate)
  int candidate = 0;                                     // 1-based node set of `placement`; 0: none
  int candidates = 0;                                    // node sets computed; 0: not said
  std::optional<std::string> relaxations;                // "none" when none
  std::optional<std::vector<NodeGpus>> cons_tres_alone;  // compare_cons_tres; empty: none
  // A requeued job: the NVLink domains of its last placement, which it goes back to when they
  // have room (a failed tray replaced inside its rack). Empty: none.
  std::vector<std::string> back_to;
};

// "v=1 event=placed asked_gpus=4 ... relaxations=none": the line, fields in a fixed order,
// each value bare or quoted (QuoteValue). Never ends with a newline.
std::string Format(const PlacementLine& line);

// The value of field KEY of a formatted line (quotes and escapes undone); nullopt when the
// line has no such field or is not one this version reads.
std::optional<std::string> LineField(absl::string_view line, absl::string_view key);

// The placement's own fields, as Format writes them ("gpus=node01:4-7 domains=... origin=...").
std::string FormatPlacement(const LinePlacement& placement);

// "node03:4-7 node05:0,2" ("none" for no node).
std::string GpusText(const std::vector<NodeGpus>& gpus);

// A value as the line writes it: bare when it is not empty and every byte is printable
// ASCII other than `"`, `\` and `=`; else in double quotes, with `"` and `\` escaped by a
// backslash, newline, tab and carriage return as \n \t \r, other control bytes as \xNN.
std::string QuoteValue(absl::string_view value);

}  // namespace nvlplace::plugin

#endif  // NVLPLACE_PLUGIN_PLACEMENT_LINE_H_
