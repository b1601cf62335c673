// The one guard at the C boundary (kmsp11's LogAndResolve): every extern "C" entry point of
// the facade runs its body through Resolve, which returns the body's value, or, when the
// body throws anything at all, logs one line naming the entry point and the exception and
// returns the entry's fallback. Nothing thrown ever reaches slurmctld.
#ifndef NVLPLACE_PLUGIN_GUARD_H_
#define NVLPLACE_PLUGIN_GUARD_H_

#include <exception>
#include <new>
#include <type_traits>
#include <utility>

#include "plugin/nvlplace_facade.h"

namespace nvlplace::plugin {

// Writes "nvlplace: internal error in ENTRY: WHAT; CONSEQUENCE" to the sink set with
// nvl_facade_set_log_sink (standard error by default). Formats into a fixed buffer:
// allocates nothing, throws nothing.
void LogCaught(const char* entry, const char* what, const char* consequence) noexcept;

// RET body(), or `fallback` when body throws (logged with `consequence`, e.g. "placing as
// cons_tres"). `fallback` is computed before the body runs, so that the guard itself
// cannot throw.
template <typename T, typename Body>
T Resolve(const char* entry, const char* consequence, T fallback, Body&& body) noexcept {
  static_assert(std::is_trivially_copyable_v<T>, "a fallback must be returned without throwing");
  try {
    return std::forward<Body>(body)();
  } catch (const std::bad_alloc&) {
    LogCaught(entry, "out of memory", consequence);
  } catch (const std::exception& e) {
    LogCaught(entry, e.what(), consequence);
  } catch (...) {
    LogCaught(entry, "an exception that is not a std::exception", consequence);
  }
  return fallback;
}

// The same for entry points that return nothing.
template <typename Body>
void ResolveVoid(const char* entry, const char* consequence, Body&& body) noexcept {
  Resolve<int>(entry, consequence, 0, [&] {
    std::forward<Body>(body)();
    return 0;
  });
}

}  // namespace nvlplace::plugin

#endif  // NVLPLACE_PLUGIN_GUARD_H_
