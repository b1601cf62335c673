// nvlplace check hostlist|indexes|gpus: the engine's list parsers, for scripts.
#include "contrib/cli/cmd_check_lists.h"

#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "contrib/cli/cli_common.h"
#include "placement/model/hostlist.h"
#include "placement/model/limits.h"
#include "placement/model/status_macros.h"

namespace nvlplace::cli {
namespace {

using Items = std::vector<std::string>;
// What a verb prints for its items: the parts separated by `sep` ("\n" for items given on the
// command line, " " for a line of a batch).
using ListAnswer = std::function<absl::StatusOr<std::string>(const Items& items, const char* sep)>;

// One answer holds at most this many names, indexes or GPUs.
constexpr size_t kMaxParts = limits::kMaxNamesPerFile;

struct ListArgs {
  Items items;
  std::string batch;
  bool expand = false;
  bool compress = false;
};

absl::Status CheckParts(size_t have, size_t more) {
  if (more <= kMaxParts - have) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("more than ", kMaxParts, " items in one answer"));
}

absl::StatusOr<std::string> Expand(const Items& exprs, const char* sep) {
  Items out;
  for (const std::string& expr : exprs) {
    NVL_ASSIGN_OR_RETURN(size_t count, CountHostlist(expr));
    NVL_RETURN_IF_ERROR(CheckParts(out.size(), count));
    NVL_ASSIGN_OR_RETURN(Items names, ExpandHostlist(expr));
    out.insert(out.end(), names.begin(), names.end());
  }
  return absl::StrJoin(out, sep);
}

// Each name must be one host name: a hostlist that expands to itself.
absl::StatusOr<std::string> Compress(const Items& names, const char* /*sep*/) {
  for (const std::string& name : names) {
    NVL_ASSIGN_OR_RETURN(Items self, ExpandHostlist(name));
    if (self.size() != 1 || self[0] != name) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", Printable(name), "' is not one host name (no ',' or brackets)"));
    }
  }
  return CompressHostlist(names);
}

absl::StatusOr<std::string> Indexes(const Items& lists, const char* sep) {
  std::vector<uint64_t> out;
  for (const std::string& list : lists) {
    NVL_ASSIGN_OR_RETURN(std::vector<uint64_t> values, ExpandIndexList(list));
    NVL_RETURN_IF_ERROR(CheckParts(out.size(), values.size()));
    out.insert(out.end(), values.begin(), values.end());
  }
  return absl::StrJoin(out, sep);
}

// "node[01-02]:0-1" -> node01:0 node01:1 node02:0 node02:1 (the hostlist after the last ':'
// is the index list, as in a busy list).
absl::StatusOr<std::string> Gpus(const Items& words, const char* sep) {
  Items out;
  for (const std::string& word : words) {
    size_t colon = word.rfind(':');
    if (colon == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", Printable(word), "' is not NODES:INDEXES, such as node[01-02]:0-3"));
    }
    NVL_ASSIGN_OR_RETURN(Items nodes, ExpandHostlist(word.substr(0, colon)));
    NVL_ASSIGN_OR_RETURN(std::vector<uint64_t> idx, ExpandIndexList(word.substr(colon + 1)));
    NVL_RETURN_IF_ERROR(CheckParts(out.size(), nodes.size() * idx.size()));
    for (const std::string& node : nodes) {
      for (uint64_t i : idx) out.push_back(absl::StrCat(node, ":", i));
    }
  }
  return absl::StrJoin(out, sep);
}

// Items on the command line, answered one part per line; or each line of a batch file (its
// whitespace-separated items) answered on one line.
int RunList(const ListArgs& a, const ListAnswer& answer) {
  if (a.batch.empty() == a.items.empty()) {
    return Fail(absl::InvalidArgumentError(a.batch.empty()
                                               ? "nothing to check: give the items, or --batch FILE"
                                               : "give the items or --batch FILE, not both"));
  }
  if (!a.batch.empty()) {
    return AnswerLines(a.batch, [&](absl::string_view line) {
      Items items = absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
      return answer(items, " ");
    });
  }
  absl::StatusOr<std::string> out = answer(a.items, "\n");
  if (!out.ok()) return Fail(out.status());
  std::cout << *out << "\n";
  return kExitOk;
}

CLI::App* AddListVerb(CLI::App* check, const std::string& name, const std::string& help,
                      const std::string& items_help, ListArgs* a) {
  CLI::App* c = check->add_subcommand(name, help);
  c->add_option("items", a->items, items_help);
  c->add_option("--batch", a->batch,
                "answer each line of FILE (- for stdin) on one line, parts separated by spaces: "
                "one nvlplace for thousands of items");
  return c;
}

void AddHostlist(CLI::App* check, std::function<int()>* run) {
  auto a = std::make_shared<ListArgs>();
  CLI::App* c = AddListVerb(
      check, "hostlist",
      "Expand Slurm hostlists into names (one per line), or compress names into one hostlist",
      "hostlists (--expand) or host names (--compress)", a.get());
  CLI::Option* expand = c->add_flag("--expand", a->expand, "node[01-03],gpu7 -> node01 ...");
  c->add_flag("--compress", a->compress, "node01 node02 node03 -> node[01-03]")->excludes(expand);
  c->callback([a, run] {
    *run = [a] {
      if (!a->expand && !a->compress) {
        return Fail(absl::InvalidArgumentError("check hostlist: give --expand or --compress"));
      }
      return RunList(*a, a->expand ? ListAnswer(Expand) : ListAnswer(Compress));
    };
  });
}

}  // namespace

void AddListChecks(CLI::App* check, std::function<int()>* run) {
  AddHostlist(check, run);
  auto idx = std::make_shared<ListArgs>();
  AddListVerb(check, "indexes",
              "Expand index lists (GPU indexes, array task ids) into numbers, one per line",
              "index lists such as 0-3,6", idx.get())
      ->callback([idx, run] { *run = [idx] { return RunList(*idx, Indexes); }; });
  auto gpus = std::make_shared<ListArgs>();
  AddListVerb(check, "gpus",
              "Expand a job's GPUs, NODES:INDEXES words as `scontrol show job -d` gives them, "
              "into node:index, one per line (nodes, then indexes, as written)",
              "NODES:INDEXES words (node[08-09]:0-3 node10:4-7)", gpus.get())
      ->callback([gpus, run] { *run = [gpus] { return RunList(*gpus, Gpus); }; });
}

}  // namespace nvlplace::cli
