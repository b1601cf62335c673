// The one guard at the C boundary: whatever a facade body throws becomes the entry's fallback
// and one logged line; nothing escapes.
#include "plugin/guard.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace nvlplace::plugin {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> g_lines;
void Sink(int level, const char* line) { g_lines.push_back(std::to_string(level) + " " + line); }

class GuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_lines.clear();
    nvl_facade_set_log_sink(Sink);
  }
  void TearDown() override { nvl_facade_set_log_sink(nullptr); }
};

TEST_F(GuardTest, ReturnsTheBodysValueAndLogsNothing) {
  EXPECT_EQ(Resolve("entry", "fallback", -1, [] { return 5; }), 5);
  EXPECT_TRUE(g_lines.empty());
}

TEST_F(GuardTest, EveryKindOfExceptionBecomesTheFallbackAndOneLine) {
  EXPECT_EQ(Resolve("nvl_decide", "placing as cons_tres", -1,
                    []() -> int { throw std::runtime_error("boom"); }),
            -1);
  EXPECT_EQ(Resolve("nvl_decide", "the job waits", -2, []() -> int { throw std::bad_alloc(); }),
            -2);
  // Not a std::exception: a throw of any value is caught too.
  EXPECT_EQ(Resolve("nvl_decision_took", "the node set is refused", 0, []() -> int { throw 42; }),
            0);
  const char* none = "x";
  EXPECT_EQ(Resolve<const char*>("nvl_decision_candidate", "no more node sets", nullptr,
                                 [&]() -> const char* {
                                   std::vector<int> v;
                                   (void)v.at(3);  // std::out_of_range
                                   return none;
                                 }),
            nullptr);
  EXPECT_THAT(g_lines,
              ElementsAre("0 nvlplace: internal error in nvl_decide: boom; placing as cons_tres",
                          "0 nvlplace: internal error in nvl_decide: out of memory; the job waits",
                          "0 nvlplace: internal error in nvl_decision_took: an exception that is "
                          "not a std::exception; the node set is refused",
                          ::testing::StartsWith("0 nvlplace: internal error in "
                                                "nvl_decision_candidate: vector::_M_range_check")));
}

TEST_F(GuardTest, VoidBodiesAreGuardedToo) {
  int ran = 0;
  ResolveVoid("nvl_decision_refused", "the refusal is not logged", [&] { ++ran; });
  ResolveVoid("nvl_decision_refused", "the refusal is not logged",
              [&] { throw std::logic_error("bad state"); });
  EXPECT_EQ(ran, 1);
  EXPECT_THAT(g_lines, ElementsAre("0 nvlplace: internal error in nvl_decision_refused: bad "
                                   "state; the refusal is not logged"));
}

TEST_F(GuardTest, ALongMessageIsCutNotOverrun) {
  std::string what(4000, 'x');
  EXPECT_EQ(Resolve("e", "c", 1, [&]() -> int { throw std::runtime_error(what); }), 1);
  ASSERT_EQ(g_lines.size(), 1u);
  EXPECT_LT(g_lines[0].size(), 520u);
}

}  // namespace
}  // namespace nvlplace::plugin
