// The placement line's one writer (see placement_line.h).
#include "plugin/placement_line.h"

#include <algorithm>

#include "absl/strings/match.h"
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
  if (!line.back_to.empty()) Field(&out, "back_to", absl::StrJoin(line.back_to, ","));
  return out;
}

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads a quoted value at line[*at] == '"'; moves *at past the closing quote.
std::optional<std::string> Unquote(absl::string_view line, size_t* at) {
  std::string out;
  for (size_t i = *at + 1; i < line.size(); ++i) {
    char c = line[i];
    if (c == '"') {
      *at = i + 1;
      return out;
    }
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (++i >= line.size()) return std::nullopt;
    switch (line[i]) {
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 'x': {
        int hi = i + 2 < line.size() ? HexDigit(line[i + 1]) : -1;
        int lo = i + 2 < line.size() ? HexDigit(line[i + 2]) : -1;
        if (hi < 0 || lo < 0) return std::nullopt;
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        break;
      }
      default:
        out.push_back(line[i]);  // \" and \\ .
    }
  }
  return std::nullopt;  // no closing quote
}

}  // namespace

std::optional<std::string> LineField(absl::string_view line, absl::string_view key) {
  if (absl::StartsWith(line, "nvlplace: ")) line.remove_prefix(10);
  if (!absl::StartsWith(line, absl::StrCat("v=", kPlacementLineVersion, " "))) return std::nullopt;
  size_t at = 0;
  while (at < line.size()) {
    size_t eq = line.find('=', at);
    if (eq == absl::string_view::npos) return std::nullopt;
    absl::string_view k = line.substr(at, eq - at);
    at = eq + 1;
    std::optional<std::string> value;
    if (at < line.size() && line[at] == '"') {
      value = Unquote(line, &at);
      if (!value) return std::nullopt;
    } else {
      size_t end = std::min(line.find(' ', at), line.size());
      value = std::string(line.substr(at, end - at));
      at = end;
    }
    if (k == key) return value;
    if (at < line.size() && line[at] != ' ') return std::nullopt;
    ++at;
  }
  return std::nullopt;
}

}  // namespace nvlplace::plugin
