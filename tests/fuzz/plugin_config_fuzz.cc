// Fuzzes nvlplace.yaml (ParsePluginConfig): accepted values are within their documented ranges.
#include <cmath>
#include <string>

#include "plugin/plugin_config.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvlplace;
  auto c = plugin::ParsePluginConfig(fuzz::AsText(data, size), "/etc/slurm/nvlplace.yaml");
  if (!c.ok()) return 0;
  FUZZ_CHECK(!c->topology.empty(), "no topology");
  FUZZ_CHECK(!c->policy.empty(), "no policy");
  FUZZ_CHECK(c->candidates >= 1 && c->candidates <= 16, "candidates %d", c->candidates);
  FUZZ_CHECK(c->log_level >= plugin::kLogError && c->log_level <= plugin::kLogDebug, "log level %d",
             static_cast<int>(c->log_level));
  for (const auto& [name, weight] : c->weights) {
    FUZZ_CHECK(std::isfinite(weight) && weight > 0 && weight <= 1e6, "weight %s = %g", name.c_str(),
               weight);
  }
  return 0;
}
