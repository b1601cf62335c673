// Fuzzes ExpandHostlist, and on accepted input the round trip set(Expand(Compress(x))) == set(x).
#include <set>
#include <string>
#include <vector>

#include "placement/hostlist.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvlplace;
  auto hosts = ExpandHostlist(fuzz::AsText(data, size));
  if (!hosts.ok()) return 0;
  FUZZ_CHECK(hosts->size() <= kMaxHosts, "%zu hosts", hosts->size());
  std::string compressed = CompressHostlist(*hosts);
  auto again = ExpandHostlist(compressed);
  FUZZ_CHECK(again.ok(), "Expand(Compress(x)) fails: '%s': %s", compressed.c_str(),
             fuzz::Message(again.status()).c_str());
  std::set<std::string> want(hosts->begin(), hosts->end());
  std::set<std::string> got(again->begin(), again->end());
  FUZZ_CHECK(want == got, "set(Expand(Compress(x))) != set(x): %zu names, %zu after '%s'",
             want.size(), got.size(), compressed.c_str());
  return 0;
}
