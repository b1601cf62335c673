// Numbers with a fixed number of decimals, printf's "%.Nf" without printf.
#include "contrib/replay/fixed_decimals.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <system_error>

#include "absl/strings/str_format.h"

namespace nvlplace::replay {
namespace {

constexpr int kMaxFastDecimals = 6;
constexpr uint64_t kPow10[kMaxFastDecimals + 1] = {1, 10, 100, 1000, 10000, 100000, 1000000};

// `v` scaled by 10^decimals and rounded to the nearest integer, into *n; false on a tie
// (then only the exact digits decide, which to_chars reads). The product x = v * 10^d is the
// exact product rounded once (10^d is exact), and k + 1/2 is a double for x < 2^52: since
// rounding keeps order, x falls on the same side of every k + 1/2 as the exact product, or
// on it, so x rounds to the exact product's nearest integer unless its fraction is 1/2.
bool Scaled(double v, int decimals, uint64_t* n) {
  const double x = v * static_cast<double>(kPow10[decimals]);  // exact: under 2^53
  const double whole = std::floor(x);
  const double frac = x - whole;  // exact: x and floor(x) are close doubles
  if (frac == 0.5) return false;
  *n = static_cast<uint64_t>(whole) + (frac > 0.5 ? 1 : 0);
  return true;
}

}  // namespace

void AppendFixed(std::string* out, double v, int decimals) {
  uint64_t n = 0;
  if (v > 0 && v < 1e9 && decimals >= 0 && decimals <= kMaxFastDecimals &&
      Scaled(v, decimals, &n)) {
    char buf[32];
    const uint64_t unit = kPow10[decimals];
    char* end = std::to_chars(buf, buf + sizeof buf, n / unit).ptr;
    if (decimals > 0) {
      *end++ = '.';
      uint64_t fraction = n % unit;
      for (int i = decimals; i-- > 0;) {
        end[i] = static_cast<char>('0' + fraction % 10);
        fraction /= 10;
      }
      end += decimals;
    }
    out->append(buf, end);
    return;
  }
  char buf[48];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (ec != std::errc()) {  // too long for the buffer (|v| from about 1e35): printf's way
    absl::StrAppendFormat(out, "%.*f", decimals, v);
    return;
  }
  out->append(buf, end);
}

}  // namespace nvlplace::replay
