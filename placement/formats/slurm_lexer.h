// The lexer of Slurm's key=value files (topology.conf, gres.conf) and "# nvlplace:" notes.
#ifndef NVLPLACE_PLACEMENT_FORMATS_SLURM_LEXER_H_
#define NVLPLACE_PLACEMENT_FORMATS_SLURM_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/model/topology.h"

// Three steps, each bounded by its input: SplitConf cuts a file into logical lines (ReadConfLines
// also reads the files its Include lines name, in their place), Words cuts a line into words,
// ParseFields reads the words as key=value fields of a known set of keys; the Get* readers then
// check one field each. Every error is InvalidArgument "file:line: key: message" (FormatAt),
// the file and the 1-based line being where a logical line starts (in the included file for
// its lines) and the key escaped with Printable; nothing is read but the text given and the
// files Include names (through the caller's reader), Include nests at most
// limits::kMaxIncludeDepth files, and no reader allocates for a size it has not checked
// against limits.h first.
namespace nvlplace::slurm {

// What follows '#' (and spaces) on a comment line that carries an nvlplace annotation:
// "# nvlplace: cluster name=lab". ImportSlurm reads these lines, ExportSlurm writes them.
inline constexpr absl::string_view kAnnotation = "nvlplace:";

// Where a message points: `file`, 1-based `line`, and `key` (escaped) as the path.
SourceLoc At(const std::string& file, int line, absl::string_view key);

// InvalidArgument "file:line: key: message"; "file:line: message" when `key` is empty.
absl::Status LineError(const std::string& file, int line, absl::string_view key,
                       absl::string_view message);

// ---- lines --------------------------------------------------------------------------------

struct TextLine {
  int line;          // 1-based; a continued line keeps the number of its first line
  std::string text;  // comment removed, continuations joined
  int file = 0;      // the file it is in: an index into SplitText::files (0: the file read)
  int64_t seq = 0;   // reading order over lines and annotations of every file (SplitConf: the
                     // line); Include lines are replaced by the lines they bring, in order
};

struct SplitText {
  std::vector<TextLine> lines;        // configuration lines, in reading order
  std::vector<TextLine> annotations;  // the text after "# nvlplace:", trimmed, in reading order
  // The files the lines are in, as messages name them: the file read, then each file an
  // Include line brought in (ReadConfLines; SplitConf leaves it empty).
  std::vector<std::string> files;
};

// Where another line is, for a message about a line of file `here`: "line 7" when it is in
// that file, "racks.conf:7" when in another (one that an Include line brought in).
std::string LineRef(const SourceLoc& there, absl::string_view here);

// The logical lines of a file. A line is split at '\n'; the text from an unescaped '#' on is a
// comment ("\#" stands for '#', as in Slurm's parser); a line whose code ends in an odd
// number of '\' (spaces after them aside) is continued on the next one: as Slurm's parser
// does, the last '\' is removed and the next line follows without a space ("Nodes=n[1-2],\"
// then "n[3-4]" reads "Nodes=n[1-2],n[3-4]"; a '\' on the last line is dropped); lines left
// blank are dropped. A comment line whose '#' is followed (after spaces) by
// kAnnotation is also kept, without it, as an annotation. Never fails.
SplitText SplitConf(absl::string_view text);

// How the files named by "Include FILE" lines are read.
struct IncludeFiles {
  // Reads the file at `path`: its text, or an error saying why not (ReadFileToString's
  // messages). Null: the text was not read from a file, and an Include line is an error.
  std::function<absl::StatusOr<std::string>(const std::string& path)> read;
  // The directory a relative path is read from. Slurm's is the directory of slurm.conf
  // (read_config.c get_extra_conf_path), where it finds topology.conf and gres.conf too.
  // Empty: the directory of the file read (ReadConfLines's `file`), whose lines and those of
  // every file it includes resolve against it, whatever directory an included file is in.
  std::string dir;
};

// The logical lines (and annotations) of `text`, read from `file`, with each Include line
// replaced by those of the file it names, as Slurm's parser reads it (parse_config.c
// _parse_include_directive, the same from 23.11 to 26.05): a line that starts with "include"
// in any case, then spaces and one file name. The name is read as written (no quotes, no
// %-expansion), an absolute path as is, a relative one in includes.dir; the file's lines come
// in its place, its own Include lines too, each line keeping its file (SplitText::files) and
// line. Errors at the Include line ("file:line: Include: ..."): no reader; a line that
// Slurm would refuse or read otherwise (spaces before Include, "Include=", no name, words after
// it, %c, which Slurm expands only in slurm.conf, a '*', which it does not expand); a file that
// cannot be read (the reader's message, and where a relative path was looked for); a file
// that is being read already (a cycle, named), more than limits::kMaxIncludeDepth files deep,
// more than limits::kMaxIncludedFiles files in all, or, with every file read, more than
// limits::kMaxConfigBytes bytes. Recursion is bounded by kMaxIncludeDepth.
absl::StatusOr<SplitText> ReadConfLines(absl::string_view text, const std::string& file,
                                        const IncludeFiles& includes);

// ---- words --------------------------------------------------------------------------------

// The whitespace-separated words of `text`; a double-quoted part may hold spaces (the quotes
// are dropped, so `""` is an empty word). Spaces around the '=' after a key (letters, digits,
// '_', '.') do not split, as in Slurm's key=value pattern: "Nodes = n1" and "Nodes= n1" are
// the word "Nodes=n1". Errors at `line`: a quote left open (without a key, quoting the text
// from the open quote, at most 24 bytes); "Nodes= Switches=s1", where Slurm would read
// "Switches=s1" as the value of Nodes (at the key).
absl::StatusOr<std::vector<std::string>> Words(absl::string_view text, const std::string& file,
                                               int line);

// ---- fields -------------------------------------------------------------------------------

// One line's key=value pairs, keys in their canonical spelling, in the order written.
struct Fields {
  std::string file;
  int line = 0;
  std::vector<std::pair<std::string, std::string>> values;

  // The value of `key` (canonical spelling), or nullptr when the line does not give it.
  const std::string* Find(absl::string_view key) const;
  // LineError at this line and `key`.
  absl::Status Error(absl::string_view key, absl::string_view message) const;
};

// Reads `words` as key=value fields (split at the first '='). Keys match `keys`
// case-insensitively and take the spelling of `keys`. Errors, at the word: a word without '='
// ("expected key=value"), a key not in `keys` ("unknown key; <what> keys are ..."), a key given
// twice ("given twice").
absl::StatusOr<Fields> ParseFields(const std::vector<std::string>& words, const std::string& file,
                                   int line, const std::vector<absl::string_view>& keys,
                                   absl::string_view what);

// An error "required" at `key` when the line does not give it.
absl::Status Require(const Fields& f, absl::string_view key);

// ---- field readers ------------------------------------------------------------------------
// Each reads one key; when the line does not give it, *out is left alone and the result is
// OK (or empty). Errors are at the line and the key, quoting the value (escaped).

// A finite number (SimpleAtod: no "inf", no "nan"): "'<v>' is not a number".
absl::Status GetNumber(const Fields& f, absl::string_view key, double* out);

// A number in [min, max], min refused when `min_excluded`: else "'<v>' is not <what>".
absl::Status GetBounded(const Fields& f, absl::string_view key, double min, bool min_excluded,
                        double max, absl::string_view what, double* out);

// A whole number in [min, max]: "'<v>' is not an integer" (also past int's range) or "'<v>' is
// not a whole number from <min> to <max>".
absl::Status GetInt(const Fields& f, absl::string_view key, int min, int max, int* out);

// A name (CheckSlurmName; `what` begins its message); an empty string when the key is absent.
absl::StatusOr<std::string> GetName(const Fields& f, absl::string_view key, absl::string_view what);

// The rules for a name read from any of Slurm's files (topology.conf, topology.yaml,
// gres.conf), which nvlplace may write back into them: CheckName's (printable UTF-8 of at most
// limits::kMaxNameBytes bytes) and no backslash, which Slurm's files read as an escape or, at a
// line's end, a continuation (the name would not read back as itself). The message, without
// its place, begins with `what`.
absl::Status CheckSlurmName(absl::string_view name, absl::string_view what);

// No backslash in a hostlist (or list of paths) of a Slurm file, for the same reason.
absl::Status CheckSlurmList(absl::string_view list);

// Names expanded from the hostlists of one file, all together, against `max`
// (TopologyLimits::max_names, limits::kMaxNamesPerFile unless the caller lowers it).
struct NameBudget {
  size_t names = 0;
  size_t max = limits::kMaxNamesPerFile;
};

// Charges `count` names to `budget`; InvalidArgument (the message without its place) when they
// would take the file past budget->max, and then nothing is charged.
absl::Status ChargeNames(size_t count, NameBudget* budget);

// The number of names the hostlist value of `key` holds (0 when absent), counted without
// expanding it and charged to `budget`: an error when it would take the file past
// budget->max, or when the hostlist is malformed (CountHostlist's message).
absl::StatusOr<size_t> CountNames(const Fields& f, absl::string_view key, NameBudget* budget);

// Appends the names of the hostlist value of `key`, counted first (CountNames).
absl::Status GetHostlist(const Fields& f, absl::string_view key, NameBudget* budget,
                         HostNames* out);
absl::Status GetHostlist(const Fields& f, absl::string_view key, NameBudget* budget,
                         std::vector<std::string>* out);

// Appends the islands "0,1,2,3/4,5,6,7" -> {{0,1,2,3},{4,5,6,7}}, as written (neither sorted nor
// checked for repeats). Errors: an entry that is not an integer, more than
// limits::kMaxGpusPerNode entries in all.
absl::Status GetIslands(const Fields& f, absl::string_view key, std::vector<std::vector<int>>* out);

}  // namespace nvlplace::slurm

#endif  // NVLPLACE_PLACEMENT_FORMATS_SLURM_LEXER_H_
