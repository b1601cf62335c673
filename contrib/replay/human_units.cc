// Numbers as a person reads them.
#include "contrib/replay/human_units.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace nvlplace::replay {
namespace {

// "1234567" -> "1,234,567" (digits only, no sign).
std::string Group(const std::string& digits) {
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::string HumanCount(int64_t n) {
  // The magnitude as unsigned: -INT64_MIN does not fit an int64_t.
  uint64_t magnitude = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  return (n < 0 ? "-" : "") + Group(absl::StrFormat("%u", magnitude));
}

std::string HumanNumber(double x) {
  if (!std::isfinite(x)) return "n/a";
  std::string text = absl::StrFormat("%.1f", std::fabs(x));  // "1234.5"
  size_t dot = text.find('.');
  std::string sign = x < 0 && text != "0.0" ? "-" : "";
  return sign + Group(text.substr(0, dot)) + text.substr(dot);
}

std::string HumanDuration(double s) {
  if (!std::isfinite(s)) return "n/a";
  double a = std::fabs(s);
  if (a < 90) return absl::StrFormat("%.0f s", s);
  if (a < 3600) return absl::StrFormat("%.1f min", s / 60);
  if (a < 48 * 3600) return absl::StrFormat("%.1f h", s / 3600);
  double days = s / 86400;
  if (std::fabs(days) < 100) return absl::StrFormat("%.1f days", days);
  return HumanCount(std::llround(days)) + " days";
}

std::string HumanShare(double share) {
  if (!std::isfinite(share)) return "n/a";
  return absl::StrFormat("%.1f%%", 100 * share);
}

std::string HumanChange(double relative) {
  if (!std::isfinite(relative)) return "n/a";
  double pct = 100 * relative;
  if (std::fabs(pct) < 9.95) return absl::StrFormat("%+.1f%%", pct);
  return absl::StrFormat("%+.0f%%", pct);
}

}  // namespace nvlplace::replay
