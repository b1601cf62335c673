// IsOk / StatusIs matchers: Debian's abseil has no status_matchers.h.
#ifndef NVLPLACE_TESTS_STATUS_MATCHERS_H_
#define NVLPLACE_TESTS_STATUS_MATCHERS_H_

#include <gmock/gmock.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace nvlplace::testing {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& s = GetStatus(arg);
  if (!s.ok()) *result_listener << "status is " << s;
  return s.ok();
}

// StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 3"))
MATCHER_P2(StatusIs, code, message_matcher, "") {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status is " << s;
  return s.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(s.message()), result_listener);
}

}  // namespace nvlplace::testing

#endif  // NVLPLACE_TESTS_STATUS_MATCHERS_H_
