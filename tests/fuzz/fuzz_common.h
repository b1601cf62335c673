// Helpers shared by the libFuzzer targets: a byte reader for binary-structured inputs, a
// check that crashes the fuzzer with a message, and the lab-islands cluster loaded once.
#ifndef NVLPLACE_TESTS_FUZZ_FUZZ_COMMON_H_
#define NVLPLACE_TESTS_FUZZ_FUZZ_COMMON_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "placement/formats/topology_yaml.h"
#include "placement/model/topology.h"

// A property the input broke: print where and why, then abort (libFuzzer saves the input).
#define FUZZ_CHECK(cond, ...)                                                            \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                                 \
      std::fprintf(stderr, "\n");                                                        \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

namespace nvlplace::fuzz {

inline absl::string_view AsText(const uint8_t* data, size_t size) {
  return absl::string_view(reinterpret_cast<const char*>(data), size);
}

inline std::string Message(const absl::Status& s) { return std::string(s.message()); }

// The cluster size the targets that read a cluster from text accept (4,096 GPUs; the
// product's default is 4,194,304). A legal cluster of 512k GPUs (64 blocks of 1,000 nodes in
// 3 KB of topology.yaml) takes 13.9 s to import, build and round-trip under ASan, past the
// 10 s hang timeout (CI, 2026-11-26), and the time grows with the blocks: 2,048 one-node
// blocks (16,384 GPUs) take 4.1 s on a quiet machine, and CI runs two fuzzers at once beside
// other tests, at half that speed. At this bound the worst found takes 1.5 s (512 one-node
// blocks). The code is the same at any size; the bound is checked before names are built;
// unit tests cover the default.
// The GPUs do not bound the nodes: CPU-only nodes (topology.conf nodes that a gres.conf leaves
// out, `gpus: 0` groups) are bounded by the names alone, 4,194,304 by default. 150 bytes of
// topology.conf naming 3,000,003 of them take 1.1 GB and 11.6 s under ASan, past run.sh's
// -rss_limit_mb (findings/slurm_import/oom-rss-cpu-only-nodes-ImportSlurm-1b4aaac4, written
// 2026-11-28 while looking for why fuzz.slurm_import failed once: the likely cause, not
// proven). At 65,536 names such a file takes well under a second; unit tests cover the default.
inline TopologyLimits Limits() {
  TopologyLimits limits;
  limits.max_gpus = int64_t{1} << 12;
  limits.max_names = size_t{1} << 16;
  return limits;
}

// Reads fixed-size fields from the front of the input; past the end every field is 0, so
// any input is a valid record (seeds in tests/fuzz/seeds/ are written in this layout).
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool empty() const { return p_ == end_; }
  uint8_t U8() { return p_ < end_ ? *p_++ : 0; }
  int8_t I8() { return static_cast<int8_t>(U8()); }
  int32_t I32() {  // little-endian
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(U8()) << (8 * i);
    return static_cast<int32_t>(v);
  }
  // A string of U8() bytes (fewer at the end of the input).
  std::string Str() {
    size_t n = std::min<size_t>(U8(), end_ - p_);
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// configs/lab-islands.yaml: node[00-15], 8 GPUs each in NVLink islands {0-3} and {4-7}, four
// leaves under one spine. Loaded once; aborts if the checkout lacks it.
inline std::shared_ptr<const Topology> LabIslands() {
  static const std::shared_ptr<const Topology> topo = [] {
    auto t = LoadTopologyFile(std::string(NVLPLACE_SOURCE_DIR) + "/configs/lab-islands.yaml");
    if (!t.ok()) {
      std::fprintf(stderr, "cannot load lab-islands: %s\n", Message(t.status()).c_str());
      std::abort();
    }
    return *t;
  }();
  return topo;
}

}  // namespace nvlplace::fuzz

#endif  // NVLPLACE_TESTS_FUZZ_FUZZ_COMMON_H_
