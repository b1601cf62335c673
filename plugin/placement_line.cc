// The placement line's one writer (see placement_line.h).
#include "plugin/placement_line.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "placement/engine/explain.h"
#include "placement/model/request.h"

namespace nvlplace::plugin {
namespace {

bool Bare(absl::string_view v) {
  if (v.empty()) return false;
  for (unsigned char c : v) {
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '=') return false;
  }
  return true;
}

const char* YesNo(bool b) { return b ? "yes" : "no"; }

// Appends " key=value" (the first field without the space).
void Field(std::string* out, absl::string_view key, absl::string_view value) {
  absl::StrAppend(out, out->empty() ? "" : " ", key, "=", QuoteValue(value));
}

}  // namespace

const char* EventName(Event event) {
  switch (event) {
    case Event::kPlaced:
      return "placed";
    case Event::kDiffers:
      return "differs";
    case Event::kRejected:
      return "rejected";
    case Event::kPlacedByConsTres:
      return "placed-by-cons_tres";
    case Event::kConsTres:
      return "cons_tres";
    case Event::kWaiting:
      return "waiting";
    case Event::kHeld:
      return "held";
    case Event::kRefused:
      return "refused";
    case Event::kWillRun:
      return "will-run";
    case Event::kCandidateRefused:
      return "candidate-refused";
    case Event::kCandidateTaken:
      return "candidate-taken";
  }
  return "unknown";
}

std::string QuoteValue(absl::string_view value) {
  if (Bare(value)) return std::string(value);
  return absl::StrCat("\"", EscapeControls(value, '"'), "\"");
}

std::string GpusText(const std::vector<NodeGpus>& gpus) {
  std::vector<std::string> words;
  words.reserve(gpus.size());
  for (const NodeGpus& n : gpus) {
    words.push_back(absl::StrCat(n.node, ":", n.gpus.empty() ? "no-gpu-index" : IndexList(n.gpus)));
  }
  return words.empty() ? "none" : absl::StrJoin(words, " ");
}

std::string FormatPlacement(const LinePlacement& p) {
  std::string out;
  Field(&out, "gpus", GpusText(p.gpus));
  Field(&out, "domains", absl::StrJoin(p.domains, ","));
  Field(&out, "span_domains", absl::StrCat(p.span_domains));
  Field(&out, "span_nodes", absl::StrCat(p.span_nodes));
  Field(&out, "span_tier", p.span_tier);
  Field(&out, "score", absl::StrFormat("%.1f", p.score));
  Field(&out, "origin", p.origin);
  if (!p.locality_traded.empty()) Field(&out, "locality_traded", p.locality_traded);
  return out;
}

std::string Format(const PlacementLine& line) {
  std::string out;
  Field(&out, "v", absl::StrCat(kPlacementLineVersion));
  Field(&out, "event", EventName(line.event));
  if (!line.mode.empty()) Field(&out, "mode", line.mode);
  if (line.request) {
    const LineRequest& r = *line.request;
    Field(&out, "asked_gpus", absl::StrCat(r.gpus));
    Field(&out, "asked_nodes", r.nodes > 0 ? absl::StrCat(r.nodes) : "any");
    Field(&out, "tp", absl::StrCat(r.tp));
    Field(&out, "pp", absl::StrCat(r.pp));
    Field(&out, "dp", absl::StrCat(r.dp));
    Field(&out, "nvl", r.nvl);
    Field(&out, "max_tier", r.max_tier.empty() ? "none" : r.max_tier);
    if (!r.max_tier.empty()) Field(&out, "max_tier_required", YesNo(r.max_tier_required));
    Field(&out, "model", r.model.empty() ? "any" : r.model);
    Field(&out, "exclusive", YesNo(r.exclusive));
  }
  if (!line.why.empty()) Field(&out, "why", line.why);
  if (line.start_in) Field(&out, "start_in", absl::StrCat(*line.start_in));
  if (line.placement) absl::StrAppend(&out, " ", FormatPlacement(*line.placement));
  if (line.slurm_gpus) Field(&out, "slurm_gpus", GpusText(*line.slurm_gpus));
  if (line.candidate > 0) Field(&out, "candidate", absl::StrCat(line.candidate));
  if (line.candidates > 0) Field(&out, "candidates", absl::StrCat(line.candidates));
  if (line.relaxations) Field(&out, "relaxations", *line.relaxations);
  if (line.cons_tres_alone) Field(&out, "cons_tres_alone", GpusText(*line.cons_tres_alone));
  return out;
}

}  // namespace nvlplace::plugin
