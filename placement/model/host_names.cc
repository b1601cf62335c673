// Node names kept as runs of numbered names.
#include "placement/model/host_names.h"

#include <ostream>
#include <utility>

#include "absl/strings/ascii.h"
#include "placement/model/hostlist.h"

namespace nvlplace {
namespace {

// Numbers up to 18 digits are read as numbers (below 10^18: no overflow); longer digit runs
// stay part of a single name, as CompressHostlist keeps them.
constexpr size_t kMaxDigits = 18;

bool Continues(const HostNames::Run& last, const HostNames::Run& run) {
  return last.width >= 0 && run.width == last.width && run.first == last.first + last.count &&
         run.head == last.head && run.tail == last.tail;
}

}  // namespace

void AppendPadded(std::string* out, uint64_t v, int width) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
  for (int i = n; i < width; ++i) out->push_back('0');
  while (n > 0) out->push_back(digits[--n]);
}

const std::string& HostNames::Iterator::Name() const {
  if (written_ || run_ >= runs_->size()) return name_;
  const Run& r = (*runs_)[run_];
  name_.assign(r.head);
  if (r.width >= 0) {
    AppendPadded(&name_, r.first + at_, r.width);
    name_.append(r.tail);
  }
  written_ = true;
  return name_;
}

HostNames::Iterator& HostNames::Iterator::operator++() {
  if (++at_ >= (*runs_)[run_].count) {
    ++run_;
    at_ = 0;
  }
  written_ = false;
  return *this;
}

HostNames::HostNames(std::initializer_list<std::string> names) {
  for (const std::string& n : names) push_back(n);
}

HostNames::HostNames(const std::vector<std::string>& names) {
  for (const std::string& n : names) push_back(n);
}

void HostNames::push_back(absl::string_view name) {
  size_t d = name.size();
  while (d > 0 && absl::ascii_isdigit(name[d - 1])) --d;
  size_t digits = name.size() - d;
  if (digits == 0 || digits > kMaxDigits) {
    AddRun(Run{std::string(name)});
    return;
  }
  Run run{std::string(name.substr(0, d))};
  for (char c : name.substr(d)) run.first = run.first * 10 + static_cast<uint64_t>(c - '0');
  run.width = static_cast<int>(digits);
  // "n9" then "n10" continue one run of width 1; "n09" then "n10" one of width 2: a next
  // number written as the last run writes it takes that run's width (the name is the same),
  // and AddRun joins it.
  if (!runs_.empty() && runs_.back().width >= 0 &&
      runs_.back().first + runs_.back().count == run.first) {
    std::string as_last_writes;
    AppendPadded(&as_last_writes, run.first, runs_.back().width);
    if (as_last_writes == name.substr(d)) run.width = runs_.back().width;
  }
  AddRun(std::move(run));
}

void HostNames::AddRun(Run run) {
  if (run.count == 0) return;
  if (run.width < 0) run.count = 1;
  size_ += run.count;
  if (!runs_.empty() && Continues(runs_.back(), run)) {
    runs_.back().count += run.count;
    return;
  }
  runs_.push_back(std::move(run));
}

void HostNames::Append(const HostNames& more) {
  for (const Run& r : more.runs_) AddRun(r);
}

std::string HostNames::operator[](size_t i) const {
  for (const Run& r : runs_) {
    if (i < r.count) {
      std::string name = r.head;
      if (r.width < 0) return name;
      AppendPadded(&name, r.first + i, r.width);
      return name + r.tail;
    }
    i -= r.count;
  }
  return {};
}

std::vector<std::string> HostNames::Expand() const {
  std::vector<std::string> out;
  out.reserve(size_);
  for (const std::string& name : *this) out.push_back(name);
  return out;
}

std::string HostNames::Hostlist() const { return CompressHostlist(Expand()); }

bool operator==(const HostNames& a, const HostNames& b) {
  if (a.size_ != b.size_) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
    if (*i != *j) return false;
  }
  return true;
}

std::ostream& operator<<(std::ostream& os, const HostNames& names) {
  return os << names.Hostlist();
}

}  // namespace nvlplace
