// Slurm hostlist expressions: parsing ("gpu[001-018]") and printing; name checks.
#include "placement/model/hostlist.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace nvlplace {
namespace {

// Length of the valid UTF-8 sequence at s[i] (its code point in *cp), or 0 when invalid
// (overlong forms, surrogates and code points past U+10FFFF are invalid).
size_t DecodeUtf8(absl::string_view s, size_t i, uint32_t* cp) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n;
  uint32_t v, min;
  if ((c & 0xE0) == 0xC0) {
    n = 2, v = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, v = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (n > s.size() - i) return 0;
  for (size_t k = 1; k < n; ++k) {
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    v = (v << 6) | (d & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return n;
}

// C0 controls (NUL, tab, newline, ...), DEL and the C1 controls.
bool IsControl(uint32_t cp) { return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0); }

std::string HexByte(char c) {
  static const char kHex[] = "0123456789abcdef";
  unsigned char b = static_cast<unsigned char>(c);
  return {'\\', 'x', kHex[b >> 4], kHex[b & 15]};
}

// The first byte of `s` that cannot be in a name: its position and what is wrong with it.
struct BadByte {
  size_t pos;
  std::string what;
};

bool FindBadByte(absl::string_view s, BadByte* bad) {
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    size_t n = DecodeUtf8(s, i, &cp);
    if (n == 0) {
      *bad = {i, absl::StrCat("byte ", HexByte(s[i]), " is not valid UTF-8")};
      return true;
    }
    if (IsControl(cp)) {
      *bad = {i, absl::StrCat("control character ", HexByte(s[i]), " is not allowed")};
      return true;
    }
    i += n;
  }
  return false;
}

// What a bracket's numbers are read for: a hostlist ("node[01-04]") or a list of indexes
// ("0-3,6", the inside of a bracket on its own).
struct ListKind {
  const char* name;    // "hostlist"
  const char* items;   // "hosts"
  const char* inside;  // " inside brackets"
};
constexpr ListKind kHostlist{"hostlist", "hosts", " inside brackets"};
constexpr ListKind kIndexList{"index list", "indexes", ""};

absl::Status ListError(const ListKind& kind, absl::string_view expr, size_t pos,
                       absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("bad ", kind.name, " \"", Printable(expr),
                                                 "\" at character ", pos + 1, ": ", what));
}

absl::Status HostlistError(absl::string_view expr, size_t pos, absl::string_view what) {
  return ListError(kHostlist, expr, pos, what);
}

// The parsed expression: terms of pieces, each piece literal text or a bracket of ranges.
struct Range {
  uint64_t lo, hi;
  size_t width;  // digits of "lo": numbers are zero-padded to it
};

struct Piece {
  absl::string_view text;  // literal text; empty for a bracket
  size_t first_range = 0;  // bracket: its ranges in Parsed::ranges
  size_t num_ranges = 0;
};

struct Term {
  size_t first_piece = 0;
  size_t num_pieces = 0;
  size_t count = 1;  // names it expands to
};

struct Parsed {
  std::vector<Range> ranges;
  std::vector<Piece> pieces;
  std::vector<Term> terms;
  size_t total = 0;
};

size_t Digits(uint64_t v) {
  size_t d = 1;
  while (v >= 10) v /= 10, ++d;
  return d;
}

// Reads the inside of a bracket, expr[begin, end), into `out`; returns the number of values.
absl::StatusOr<size_t> ParseBracket(const ListKind& kind, absl::string_view expr, size_t begin,
                                    size_t end, size_t* max_width, Parsed* out) {
  size_t values = 0;
  *max_width = 0;
  size_t pos = begin;
  while (true) {
    size_t comma = pos;
    while (comma < end && expr[comma] != ',') ++comma;
    absl::string_view item = absl::StripAsciiWhitespace(expr.substr(pos, comma - pos));
    if (item.empty()) return ListError(kind, expr, pos, absl::StrCat("empty range", kind.inside));
    size_t dash = item.find('-');
    absl::string_view lo = item.substr(0, dash);
    absl::string_view hi = dash == absl::string_view::npos ? lo : item.substr(dash + 1);
    auto digits = [](absl::string_view s) {
      return !s.empty() &&
             std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isdigit(c); });
    };
    if (!digits(lo) || !digits(hi)) {
      return ListError(kind, expr, pos,
                       absl::StrCat("\"", Printable(item), "\" is not a number or range lo-hi"));
    }
    if (lo.size() > 18 || hi.size() > 18) return ListError(kind, expr, pos, "number too long");
    uint64_t a = 0, b = 0;
    for (char c : lo) a = a * 10 + static_cast<uint64_t>(c - '0');
    for (char c : hi) b = b * 10 + static_cast<uint64_t>(c - '0');
    if (b < a) {
      return ListError(kind, expr, pos, absl::StrCat("range ", item, " ends before it starts"));
    }
    // b - a + 1 <= 10^18: no overflow; the sum is checked before it can grow past the limit.
    if (b - a >= limits::kMaxHosts || values + (b - a) >= limits::kMaxHosts) {
      return ListError(kind, expr, pos,
                       absl::StrCat("more than ", limits::kMaxHosts, " ", kind.items));
    }
    values += static_cast<size_t>(b - a) + 1;
    *max_width = std::max({*max_width, lo.size(), Digits(b)});
    out->ranges.push_back(Range{a, b, lo.size()});
    if (comma == end) break;
    pos = comma + 1;
  }
  return values;
}

// One linear pass: every character is looked at a bounded number of times, and each term's
// size is known (and checked) before anything is expanded.
absl::StatusOr<Parsed> Parse(absl::string_view expr) {
  if (absl::StripAsciiWhitespace(expr).empty()) {
    return absl::InvalidArgumentError("bad hostlist \"\": empty");
  }
  BadByte bad;
  if (FindBadByte(expr, &bad)) return HostlistError(expr, bad.pos, bad.what);
  Parsed out;
  size_t pos = 0;
  while (true) {
    // One term: from here to the next ',' outside brackets.
    while (pos < expr.size() && absl::ascii_isspace(expr[pos])) ++pos;
    Term term;
    term.first_piece = out.pieces.size();
    size_t name_bytes = 0;
    size_t begin = pos;
    size_t space_at = expr.size();  // trailing whitespace seen there: the term must end
    while (pos < expr.size() && expr[pos] != ',') {
      char c = expr[pos];
      if (c == '[') {
        if (space_at < pos) return HostlistError(expr, space_at, "space inside a host name");
        size_t close = pos + 1;
        while (close < expr.size() && expr[close] != ']' && expr[close] != '[') ++close;
        if (close == expr.size()) return HostlistError(expr, pos, "'[' without a matching ']'");
        if (expr[close] == '[') return HostlistError(expr, close, "nested '['");
        Piece piece;
        piece.first_range = out.ranges.size();
        size_t width = 0;
        absl::StatusOr<size_t> values = ParseBracket(kHostlist, expr, pos + 1, close, &width, &out);
        if (!values.ok()) return values.status();
        piece.num_ranges = out.ranges.size() - piece.first_range;
        out.pieces.push_back(piece);
        if (term.count > limits::kMaxHosts / *values) {
          return HostlistError(expr, begin,
                               absl::StrCat("more than ", limits::kMaxHosts, " hosts"));
        }
        term.count *= *values;
        name_bytes += width;
        pos = close + 1;
      } else if (c == ']') {
        return HostlistError(expr, pos, "']' without a matching '['");
      } else {
        size_t next = pos;
        while (next < expr.size() && expr[next] != ',' && expr[next] != '[' && expr[next] != ']' &&
               !absl::ascii_isspace(expr[next])) {
          ++next;
        }
        if (next > pos) {
          if (space_at < pos) return HostlistError(expr, space_at, "space inside a host name");
          Piece piece;
          piece.text = expr.substr(pos, next - pos);
          out.pieces.push_back(piece);
          name_bytes += next - pos;
          pos = next;
        } else {  // whitespace: only before the ',' or the end
          if (space_at > pos) space_at = pos;
          while (pos < expr.size() && absl::ascii_isspace(expr[pos])) ++pos;
        }
      }
      if (name_bytes > limits::kMaxNameBytes) {
        return HostlistError(
            expr, begin, absl::StrCat("host names longer than ", limits::kMaxNameBytes, " bytes"));
      }
    }
    term.num_pieces = out.pieces.size() - term.first_piece;
    if (term.num_pieces == 0) {
      return HostlistError(expr, std::min(pos, expr.size() - 1), "empty host name");
    }
    if (term.count > limits::kMaxHosts - out.total) {
      return HostlistError(expr, begin, absl::StrCat("more than ", limits::kMaxHosts, " hosts"));
    }
    out.total += term.count;
    out.terms.push_back(term);
    if (pos == expr.size()) break;
    ++pos;  // the ','
  }
  return out;
}

// A term's names as runs: its last bracket is the runs' numbers (one run per range in it),
// the text after it their tail, and the pieces before it (text and brackets, the leftmost
// turning slowest) make each run's head.
void AddTermRuns(const Parsed& parsed, const Term& term, HostNames* out) {
  const Piece* pieces = &parsed.pieces[term.first_piece];
  size_t last = term.num_pieces;
  for (size_t i = term.num_pieces; i-- > 0;) {
    if (pieces[i].text.empty()) {
      last = i;
      break;
    }
  }
  std::string tail;
  for (size_t i = last + 1; i < term.num_pieces; ++i) absl::StrAppend(&tail, pieces[i].text);
  if (last == term.num_pieces) {  // no bracket: one name
    HostNames::Run run;
    for (size_t i = 0; i < term.num_pieces; ++i) absl::StrAppend(&run.head, pieces[i].text);
    out->AddRun(std::move(run));
    return;
  }
  // The odometer over the brackets before `last`: each one's range and value now.
  std::vector<std::pair<size_t, uint64_t>> digits(last);
  for (size_t i = 0; i < last; ++i) {
    if (pieces[i].text.empty()) {
      digits[i] = {pieces[i].first_range, parsed.ranges[pieces[i].first_range].lo};
    }
  }
  const Piece& inner = pieces[last];
  while (true) {
    std::string head;
    for (size_t i = 0; i < last; ++i) {
      if (!pieces[i].text.empty()) {
        absl::StrAppend(&head, pieces[i].text);
      } else {
        AppendPadded(&head, digits[i].second,
                     static_cast<int>(parsed.ranges[digits[i].first].width));
      }
    }
    for (size_t k = 0; k < inner.num_ranges; ++k) {
      const Range& r = parsed.ranges[inner.first_range + k];
      out->AddRun(HostNames::Run{head, tail, r.lo, r.hi - r.lo + 1, static_cast<int>(r.width)});
    }
    // Next value of the outer brackets: the rightmost turns fastest; done when all wrap.
    bool turned = false;
    for (size_t i = last; i-- > 0 && !turned;) {
      if (!pieces[i].text.empty()) continue;
      auto& [range, value] = digits[i];
      if (value < parsed.ranges[range].hi) {
        ++value;
        turned = true;
      } else if (range + 1 < pieces[i].first_range + pieces[i].num_ranges) {
        value = parsed.ranges[++range].lo;
        turned = true;
      } else {
        range = pieces[i].first_range;
        value = parsed.ranges[range].lo;
      }
    }
    if (!turned) return;
  }
}

}  // namespace

absl::StatusOr<size_t> CountHostlist(absl::string_view expr) {
  absl::StatusOr<Parsed> parsed = Parse(expr);
  if (!parsed.ok()) return parsed.status();
  return parsed->total;
}

absl::StatusOr<HostNames> ParseHostlist(absl::string_view expr) {
  absl::StatusOr<Parsed> parsed = Parse(expr);
  if (!parsed.ok()) return parsed.status();
  HostNames out;
  for (const Term& term : parsed->terms) AddTermRuns(*parsed, term, &out);
  return out;
}

absl::StatusOr<std::vector<std::string>> ExpandHostlist(absl::string_view expr) {
  absl::StatusOr<HostNames> names = ParseHostlist(expr);
  if (!names.ok()) return names.status();
  return names->Expand();
}

absl::StatusOr<std::vector<uint64_t>> ExpandIndexList(absl::string_view list) {
  if (absl::StripAsciiWhitespace(list).empty()) {
    return absl::InvalidArgumentError("bad index list \"\": empty");
  }
  BadByte bad;
  if (FindBadByte(list, &bad)) return ListError(kIndexList, list, bad.pos, bad.what);
  Parsed parsed;
  size_t width = 0;
  absl::StatusOr<size_t> values = ParseBracket(kIndexList, list, 0, list.size(), &width, &parsed);
  if (!values.ok()) return values.status();
  std::vector<uint64_t> out;
  out.reserve(*values);
  for (const Range& r : parsed.ranges) {
    for (uint64_t v = r.lo; v <= r.hi; ++v) out.push_back(v);
  }
  return out;
}

absl::Status CheckName(absl::string_view name, absl::string_view what) {
  if (name.size() > limits::kMaxNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " '", Printable(name, limits::kMaxNameBytes), "' is longer than ",
                     limits::kMaxNameBytes, " bytes"));
  }
  BadByte bad;
  if (FindBadByte(name, &bad)) {
    return absl::InvalidArgumentError(absl::StrCat(what, " '", Printable(name), "': ", bad.what,
                                                   " (byte ", bad.pos + 1,
                                                   "); names are printable UTF-8"));
  }
  return absl::OkStatus();
}

std::string Printable(absl::string_view text, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < text.size() && i < max_bytes) {
    uint32_t cp = 0;
    size_t n = DecodeUtf8(text, i, &cp);
    if (n == 0 || IsControl(cp)) {
      out += HexByte(text[i]);
      ++i;
    } else {
      out.append(text.data() + i, n);
      i += n;
    }
  }
  if (i < text.size()) absl::StrAppend(&out, "... (", text.size(), " bytes)");
  return out;
}

namespace {

// Appends v in decimal, zero-padded to `width` digits.
void AppendNumber(std::string* out, uint64_t v, size_t width) {
  char buf[24];
  char* end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  size_t digits = static_cast<size_t>(end - buf);
  if (digits < width) out->append(width - digits, '0');
  out->append(buf, end);
}

// Appends one group of numbered names: prefix and its one number, or prefix[a-b,c,...] with
// the numbers sorted, de-duplicated and runs joined.
void AppendGroup(std::string* out, absl::string_view prefix, size_t width,
                 std::vector<uint64_t>* numbers) {
  std::sort(numbers->begin(), numbers->end());
  numbers->erase(std::unique(numbers->begin(), numbers->end()), numbers->end());
  out->append(prefix.data(), prefix.size());
  if (numbers->size() == 1) {
    AppendNumber(out, (*numbers)[0], width);
    return;
  }
  *out += '[';
  for (size_t i = 0; i < numbers->size();) {
    size_t j = i;
    while (j + 1 < numbers->size() && (*numbers)[j + 1] == (*numbers)[j] + 1) ++j;
    if (i > 0) *out += ',';
    AppendNumber(out, (*numbers)[i], width);
    if (j > i) {
      *out += '-';
      AppendNumber(out, (*numbers)[j], width);
    }
    i = j + 1;
  }
  *out += ']';
}

// The trailing digits of a name: where they start (d) and their value; false when the name
// is a literal for CompressHostlist (no trailing digits, no prefix, or more than 18 digits,
// kept below 10^18 so that they parse without overflow).
bool SplitNumber(absl::string_view h, size_t* d, uint64_t* v) {
  size_t at = h.size();
  while (at > 0 && absl::ascii_isdigit(h[at - 1])) --at;
  size_t width = h.size() - at;
  if (width == 0 || width > 18 || at == 0) return false;
  uint64_t value = 0;
  for (char c : h.substr(at)) value = value * 10 + static_cast<uint64_t>(c - '0');
  *d = at;
  *v = value;
  return true;
}

// The usual list (a job's nodes): every name one prefix and one digit width, and either the
// first padded ("n00012": a padded group, which every later name joins) or none padded (one
// unpadded group). The same output as the general way below, without its hash tables: a
// replay prints a million lists. RET false, writing nothing, for any other list.
bool CompressOneGroup(const std::vector<std::string>& hosts, std::string* out) {
  size_t d0;
  uint64_t v;
  const absl::string_view first = hosts[0];
  if (!SplitNumber(first, &d0, &v)) return false;
  const absl::string_view prefix = first.substr(0, d0);
  const size_t width = first.size() - d0;
  auto padded = [&](absl::string_view h) { return h[d0] == '0' && width > 1; };
  const bool first_padded = padded(first);
  thread_local std::vector<uint64_t> numbers;
  numbers.clear();
  for (const std::string& name : hosts) {
    const absl::string_view h = name;
    size_t d;
    if (h.size() != first.size() || !SplitNumber(h, &d, &v) || d != d0 ||
        h.substr(0, d) != prefix || (!first_padded && padded(h))) {
      return false;
    }
    numbers.push_back(v);
  }
  AppendGroup(out, prefix, first_padded ? width : 0, &numbers);
  return true;
}

}  // namespace

std::string CompressHostlist(const std::vector<std::string>& hosts) {
  // One name prints as itself (a group of one number keeps its digits and padding): a replay
  // writes a one-node job's list a million times over.
  if (hosts.size() == 1) return hosts[0];
  std::string out;
  if (hosts.empty() || CompressOneGroup(hosts, &out)) return out;
  // Group key: prefix and digit width; names without trailing digits are their own group.
  // Keys and prefixes are views of `hosts` (no copy per name).
  struct Group {
    absl::string_view prefix;
    size_t width = 0;
    bool numeric = false;
    std::vector<uint64_t> numbers;
  };
  constexpr size_t kLiteral = std::numeric_limits<size_t>::max();  // a name kept as it is
  std::vector<Group> groups;
  absl::flat_hash_map<std::pair<absl::string_view, size_t>, size_t> index;  // (prefix, width)
  absl::flat_hash_set<absl::string_view> seen;
  seen.reserve(hosts.size());
  for (const std::string& name : hosts) {
    const absl::string_view h = name;
    if (!seen.insert(h).second) continue;
    size_t d;
    uint64_t v;
    if (!SplitNumber(h, &d, &v)) {
      if (index.emplace(std::make_pair(h, kLiteral), groups.size()).second) {
        groups.push_back(Group{h, 0, false, {}});
      }
      continue;
    }
    const size_t width = h.size() - d;
    // A number without leading zero written at its natural width can share a group with
    // numbers of other natural widths only if none is padded; use width 0 for "unpadded".
    // Unpadded numbers ("100") join a padded group of their width ("098") when one exists.
    const absl::string_view prefix = h.substr(0, d);
    size_t key_width = (h[d] == '0' && width > 1) ? width : 0;
    if (key_width == 0 && index.contains(std::make_pair(prefix, width))) key_width = width;
    auto [it, inserted] = index.emplace(std::make_pair(prefix, key_width), groups.size());
    if (inserted) groups.push_back(Group{prefix, key_width, true, {}});
    groups[it->second].numbers.push_back(v);
  }
  for (Group& g : groups) {
    if (!out.empty()) out += ',';
    if (g.numeric) {
      AppendGroup(&out, g.prefix, g.width, &g.numbers);
    } else {
      out.append(g.prefix.data(), g.prefix.size());
    }
  }
  return out;
}

}  // namespace nvlplace
