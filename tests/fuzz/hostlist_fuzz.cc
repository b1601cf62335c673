// Fuzzes ExpandHostlist, and on accepted input the round trip set(Expand(Compress(x))) == set(x)
// and HostNames: the names added one at a time (push_back joins them into runs) read back as
// the names ParseHostlist gave, in no more runs than names.
#include <algorithm>
#include <string>
#include <vector>

#include "placement/model/hostlist.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvlplace;
  auto hosts = ExpandHostlist(fuzz::AsText(data, size));
  if (!hosts.ok()) return 0;
  FUZZ_CHECK(hosts->size() <= kMaxHosts, "%zu hosts", hosts->size());
  // The round trip on up to 100,000 names: the fuzzer explores the syntax; valid lists of
  // up to kMaxHosts names take seconds of CPU under ASan (Compress builds each name's pieces)
  // and are bounded by tests/boundary/findings.py (CPU time and memory) and hostlist_test.
  // (A 611,441-name input took 10 s of CPU here and failed -timeout=10 on a loaded machine:
  // findings/hostlist/timeout-CompressHostlist-714f4580.)
  if (hosts->size() > 100000) return 0;
  HostNames one_by_one;
  for (const std::string& h : *hosts) one_by_one.push_back(h);
  FUZZ_CHECK(one_by_one.size() == hosts->size() && one_by_one.runs().size() <= hosts->size() &&
                 one_by_one.Expand() == *hosts,
             "HostNames of %zu names read back differently (%zu runs)", hosts->size(),
             one_by_one.runs().size());
  auto parsed = ParseHostlist(fuzz::AsText(data, size));
  FUZZ_CHECK(parsed.ok() && *parsed == one_by_one, "ParseHostlist differs from its expansion");
  std::string compressed = CompressHostlist(*hosts);
  auto again = ExpandHostlist(compressed);
  FUZZ_CHECK(again.ok(), "Expand(Compress(x)) fails: '%s': %s", compressed.c_str(),
             fuzz::Message(again.status()).c_str());
  // Sorted, de-duplicated vectors, not std::set: the same comparison without a node
  // allocation per name, which under ASan made a valid 600,000-name input take 10 s of the
  // harness's own time (tests/fuzz/findings/hostlist/timeout-CompressHostlist-714f4580).
  auto as_set = [](std::vector<std::string>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  as_set(*hosts);
  as_set(*again);
  FUZZ_CHECK(*hosts == *again, "set(Expand(Compress(x))) != set(x): %zu names, %zu after '%s'",
             hosts->size(), again->size(), compressed.c_str());
  return 0;
}
