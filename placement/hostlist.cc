// Slurm hostlist expressions: parsing ("gpu[001-018]") and printing.
#include "placement/hostlist.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace nvlplace {
namespace {

absl::Status HostlistError(absl::string_view expr, size_t pos, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("bad hostlist \"", expr, "\" at character ", pos + 1, ": ", what));
}

bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isdigit(c); });
}

// One piece of a term: either literal text or a bracket's list of numbers (already padded).
using Piece = std::vector<std::string>;

// Parses the inside of a bracket "001-003,7" starting at expr[begin], ending before `end`.
absl::StatusOr<Piece> ParseBracket(absl::string_view expr, size_t begin, size_t end) {
  Piece out;
  size_t pos = begin;
  while (pos <= end) {
    size_t comma = expr.find(',', pos);
    if (comma == absl::string_view::npos || comma > end) comma = end;
    absl::string_view item = absl::StripAsciiWhitespace(expr.substr(pos, comma - pos));
    if (item.empty()) return HostlistError(expr, pos, "empty range inside brackets");
    size_t dash = item.find('-');
    absl::string_view lo = item.substr(0, dash);
    absl::string_view hi = dash == absl::string_view::npos ? lo : item.substr(dash + 1);
    if (!AllDigits(lo) || !AllDigits(hi)) {
      return HostlistError(expr, pos, absl::StrCat("\"", item, "\" is not a number or range lo-hi"));
    }
    if (lo.size() > 18 || hi.size() > 18) return HostlistError(expr, pos, "number too long");
    uint64_t a = std::stoull(std::string(lo));
    uint64_t b = std::stoull(std::string(hi));
    if (b < a) return HostlistError(expr, pos, absl::StrCat("range ", item, " ends before it starts"));
    if (b - a >= kMaxHosts || out.size() + (b - a) >= kMaxHosts) {
      return HostlistError(expr, pos, absl::StrCat("more than ", kMaxHosts, " hosts"));
    }
    size_t width = lo.size();
    for (uint64_t v = a; v <= b; ++v) {
      std::string num = std::to_string(v);
      if (num.size() < width) num.insert(0, width - num.size(), '0');
      out.push_back(std::move(num));
    }
    pos = comma + 1;
  }
  return out;
}

// Expands one top-level term "rack[1-2]-node[01-04]" and appends to `out`.
absl::Status ExpandTerm(absl::string_view expr, size_t begin, size_t end,
                        std::vector<std::string>* out) {
  std::vector<Piece> pieces;
  size_t pos = begin;
  while (pos < end) {
    if (expr[pos] == '[') {
      size_t close = expr.find(']', pos);
      if (close == absl::string_view::npos || close >= end) {
        return HostlistError(expr, pos, "'[' without a matching ']'");
      }
      size_t nested = expr.find('[', pos + 1);
      if (nested != absl::string_view::npos && nested < close) {
        return HostlistError(expr, nested, "nested '['");
      }
      absl::StatusOr<Piece> piece = ParseBracket(expr, pos + 1, close);
      if (!piece.ok()) return piece.status();
      pieces.push_back(*std::move(piece));
      pos = close + 1;
    } else if (expr[pos] == ']') {
      return HostlistError(expr, pos, "']' without a matching '['");
    } else {
      size_t next = std::min(expr.find_first_of("[]", pos), end);
      pieces.push_back({std::string(expr.substr(pos, next - pos))});
      pos = next;
    }
  }
  size_t total = 1;
  for (const Piece& p : pieces) {
    total *= p.size();
    if (total + out->size() > kMaxHosts) {
      return HostlistError(expr, begin, absl::StrCat("more than ", kMaxHosts, " hosts"));
    }
  }
  // Cartesian product, leftmost piece outermost.
  std::vector<size_t> idx(pieces.size(), 0);
  for (size_t n = 0; n < total; ++n) {
    std::string name;
    for (size_t i = 0; i < pieces.size(); ++i) name += pieces[i][idx[i]];
    for (size_t i = pieces.size(); i-- > 0;) {
      if (++idx[i] < pieces[i].size()) break;
      idx[i] = 0;
    }
    out->push_back(std::move(name));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandHostlist(absl::string_view expr) {
  std::vector<std::string> out;
  if (absl::StripAsciiWhitespace(expr).empty()) {
    return absl::InvalidArgumentError("bad hostlist \"\": empty");
  }
  size_t pos = 0;
  int depth = 0;
  size_t term_begin = 0, open_at = 0;
  for (pos = 0; pos <= expr.size(); ++pos) {
    char c = pos < expr.size() ? expr[pos] : ',';
    if (c == '[' && depth++ == 0) open_at = pos;
    if (c == ']') {
      if (depth == 0) return HostlistError(expr, pos, "']' without a matching '['");
      --depth;
    }
    if (c != ',' || depth > 0) continue;
    size_t b = term_begin, e = pos;
    while (b < e && absl::ascii_isspace(expr[b])) ++b;
    while (e > b && absl::ascii_isspace(expr[e - 1])) --e;
    if (b == e) return HostlistError(expr, std::min(pos, expr.size() - 1), "empty host name");
    for (size_t i = b; i < e; ++i) {
      if (absl::ascii_isspace(expr[i])) return HostlistError(expr, i, "space inside a host name");
    }
    absl::Status s = ExpandTerm(expr, b, e, &out);
    if (!s.ok()) return s;
    term_begin = pos + 1;
  }
  if (depth > 0) return HostlistError(expr, open_at, "'[' without a matching ']'");
  return out;
}

std::string CompressHostlist(const std::vector<std::string>& hosts) {
  // Group key: prefix and digit width; names without trailing digits are their own group.
  struct Group {
    std::string prefix;
    size_t width = 0;
    bool numeric = false;
    std::vector<uint64_t> numbers;
  };
  std::vector<Group> groups;
  absl::flat_hash_map<std::string, size_t> index;  // prefix + '\0' + width -> group
  absl::flat_hash_set<std::string> seen;
  for (const std::string& h : hosts) {
    if (!seen.insert(h).second) continue;
    size_t d = h.size();
    while (d > 0 && absl::ascii_isdigit(h[d - 1])) --d;
    size_t width = h.size() - d;
    // Keep numbers small enough to parse; treat very long digit runs as literal names.
    if (width == 0 || width > 18 || d == 0) {
      std::string key = absl::StrCat(h, std::string(1, '\0'), "literal");
      if (index.emplace(key, groups.size()).second) {
        groups.push_back(Group{h, 0, false, {}});
      }
      continue;
    }
    uint64_t v = std::stoull(h.substr(d));
    // A number without leading zero written at its natural width can share a group with
    // numbers of other natural widths only if none is padded; use width 0 for "unpadded".
    // Unpadded numbers ("100") join a padded group of their width ("098") when one exists.
    size_t key_width = (h[d] == '0' && width > 1) ? width : 0;
    std::string key = absl::StrCat(h.substr(0, d), std::string(1, '\0'), key_width);
    if (key_width == 0) {
      std::string padded = absl::StrCat(h.substr(0, d), std::string(1, '\0'), width);
      if (index.contains(padded)) key = padded, key_width = width;
    }
    auto [it, inserted] = index.emplace(key, groups.size());
    if (inserted) groups.push_back(Group{h.substr(0, d), key_width, true, {}});
    groups[it->second].numbers.push_back(v);
  }
  std::string out;
  for (Group& g : groups) {
    if (!out.empty()) out += ',';
    if (!g.numeric) {
      out += g.prefix;
      continue;
    }
    std::sort(g.numbers.begin(), g.numbers.end());
    g.numbers.erase(std::unique(g.numbers.begin(), g.numbers.end()), g.numbers.end());
    auto fmt = [&](uint64_t v) {
      std::string s = std::to_string(v);
      if (s.size() < g.width) s.insert(0, g.width - s.size(), '0');
      return s;
    };
    if (g.numbers.size() == 1) {
      out += g.prefix + fmt(g.numbers[0]);
      continue;
    }
    out += g.prefix + "[";
    for (size_t i = 0; i < g.numbers.size();) {
      size_t j = i;
      while (j + 1 < g.numbers.size() && g.numbers[j + 1] == g.numbers[j] + 1) ++j;
      if (i > 0) out += ',';
      out += fmt(g.numbers[i]);
      if (j > i) out += "-" + fmt(g.numbers[j]);
      i = j + 1;
    }
    out += "]";
  }
  return out;
}

}  // namespace nvlplace
