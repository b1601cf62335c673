// The few sentences a replay's reader sees first: which policy wins on what, by how much and
// at what cost, computed from summary.json's figures (never fixed prose).
#ifndef NVLPLACE_CONTRIB_REPLAY_HEADLINE_H_
#define NVLPLACE_CONTRIB_REPLAY_HEADLINE_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace nvlplace::replay {

// The policy the headline is about ("topo" if replayed, else the first) and the one it is
// compared with ("firstfit" if replayed, else the last other policy). With one policy both
// name it.
struct HeadlinePair {
  std::string subject;
  std::string baseline;
};
HeadlinePair ChooseHeadlinePair(const nlohmann::json& summary);

// Sentences from summary["policies"] (a SummaryJson): with two or more policies, the subject
// against the baseline on locality (points of jobs under one leaf, TP groups in one NVLink
// domain when they differ), communication, wait and makespan, the measures each wins and
// loses, and with three or more the best policy on each measure. Two figures are equal when
// they print the same (0.1 point, 0.1% change), so a sentence never contradicts a table.
std::vector<std::string> Headline(const nlohmann::json& summary);

// What step times are measured against, from summary["estimates"]: "topo's placement on the
// empty cluster, the same for every policy", or each policy's own when the replay had no
// common baseline.
std::string BaselinePlacementText(const nlohmann::json& estimates);

}  // namespace nvlplace::replay

#endif  // NVLPLACE_CONTRIB_REPLAY_HEADLINE_H_
