// Project status macros: Debian's abseil (20220623) ships no RETURN_IF_ERROR.
#ifndef NVLPLACE_PLACEMENT_MODEL_STATUS_MACROS_H_
#define NVLPLACE_PLACEMENT_MODEL_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define NVL_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::absl::Status nvl_status_ = (expr);       \
    if (!nvl_status_.ok()) return nvl_status_; \
  } while (0)

#define NVL_CONCAT_INNER_(a, b) a##b
#define NVL_CONCAT_(a, b) NVL_CONCAT_INNER_(a, b)

// NVL_ASSIGN_OR_RETURN(auto x, FunctionReturningStatusOr());
#define NVL_ASSIGN_OR_RETURN(lhs, expr) \
  NVL_ASSIGN_OR_RETURN_IMPL_(NVL_CONCAT_(nvl_statusor_, __LINE__), lhs, expr)
#define NVL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

#endif  // NVLPLACE_PLACEMENT_MODEL_STATUS_MACROS_H_
