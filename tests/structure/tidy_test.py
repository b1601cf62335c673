#!/usr/bin/env python3
"""The code that runs inside slurmctld and the tools is clean under the checks of the root
.clang-tidy: the engine (placement/engine/*.cc), the plugin's C++ (plugin/*.cc) and contrib/
(contrib/**/*.cc), tests (*_test.cc) aside. Usage: tidy_test.py BUILD_DIR (holding
compile_commands.json).

Each file is linted once, with its first compile command (the engine's sources are compiled
a second time into the plugin's objects), in two clang-tidy runs side by side (ctest gives
the test two processors). A file found clean is remembered in BUILD_DIR/tidy-clean.json under
a key of everything its result depends on: clang-tidy's version, the .clang-tidy files above
it, this script, its compile command and the bytes of every file it includes (as `clang++ -M`
lists them); a later run lints it again only when that key changed. A file whose includes
cannot be listed is always linted. NVL_TIDY_CACHE=0 lints every file.

PENDING names files being rewritten elsewhere: linted on their own, findings shown but not
counted; once one is clean the test fails until it is taken off the list."""
import glob
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JOBS = 2
# Being rewritten in issue 24 (the facade's decision state machine and its benchmark): drop
# each from here when its rewrite lands clean.
PENDING = set()


def sources():
    files = (glob.glob("placement/engine/*.cc") + glob.glob("plugin/*.cc") +
             glob.glob("contrib/**/*.cc", recursive=True))
    return sorted(f for f in files if not f.endswith("_test.cc"))


def first_commands(build):
    """Absolute path -> its first entry in the build's compile_commands.json."""
    first = {}
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        for entry in json.load(f):
            path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
            first.setdefault(path, entry)
    return first


def includes(entry):
    """Every file the compile command reads, as clang++ -M lists them; None if it cannot."""
    args = entry.get("arguments") or shlex.split(entry["command"])
    flags, skip = [], False
    for a in args[1:]:
        if skip or a == "-c":
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        flags.append(a)
    try:
        out = subprocess.run(["clang++", *flags, "-M", "-MT", "deps"], cwd=entry["directory"],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [w for w in out.replace("\\\n", " ").split()[1:]]


class Keys:
    """The cache key of each file: a digest of everything its clang-tidy result depends on."""

    def __init__(self):
        version = subprocess.run(["clang-tidy", "--version"], capture_output=True,
                                 text=True).stdout
        self.base = hashlib.sha256(version.encode() + self._read(os.path.abspath(__file__)))
        self.digests = {}

    @staticmethod
    def _read(path):
        with open(path, "rb") as f:
            return f.read()

    def _digest(self, path):
        if path not in self.digests:
            self.digests[path] = hashlib.sha256(self._read(path)).hexdigest()
        return self.digests[path]

    def key(self, source, entry):
        deps = includes(entry)
        if deps is None:
            return None
        h = self.base.copy()
        h.update(json.dumps(entry, sort_keys=True).encode())
        folder = os.path.dirname(os.path.join(ROOT, source))
        while True:  # clang-tidy uses the nearest .clang-tidy above the file
            config = os.path.join(folder, ".clang-tidy")
            if os.path.isfile(config):
                h.update(f"{config}\0{self._digest(config)}\0".encode())
            if folder == os.path.dirname(folder):
                break
            folder = os.path.dirname(folder)
        for path in deps:
            path = os.path.normpath(os.path.join(entry["directory"], path))
            h.update(f"{path}\0{self._digest(path)}\0".encode())
        return h.hexdigest()


def lint(batches, first, work):
    """Runs clang-tidy over each batch of files, the batches side by side. RET whether each
    batch was clean; prints each batch's findings, in order."""
    runs = []
    for batch in batches:
        db = tempfile.mkdtemp(dir=work)
        with open(os.path.join(db, "compile_commands.json"), "w", encoding="utf-8") as f:
            json.dump([first[os.path.join(ROOT, s)] for s in batch], f)
        out = open(os.path.join(db, "out"), "w+", encoding="utf-8")
        runs.append((out, subprocess.Popen(["clang-tidy", "-p", db, "--quiet", *batch],
                                           stdout=out, stderr=subprocess.DEVNULL)))
    clean = []
    for out, proc in runs:
        clean.append(proc.wait() == 0)
        out.seek(0)
        sys.stdout.write(out.read())
        out.close()
    return clean


def lint_pending(files, first, work):
    """Lints each pending file on its own. RET the pending files that are clean."""
    now_clean = []
    for f in files:
        print(f"tidy: {f} is PENDING: its findings (if any) below are not counted")
        if lint([[f]], first, work)[0]:
            now_clean.append(f)
    return now_clean


def linted_files(first):
    """The sources to lint that this build compiles; names the others."""
    files = []
    for f in sources():
        if os.path.join(ROOT, f) in first:
            files.append(f)
        else:  # a target configured out: named, not dropped silently
            print(f"tidy: {f} is not in compile_commands.json (not built here): not linted")
    return files


def cache_keys(files, first):
    """Each file's key, or None for every file when the cache is off (NVL_TIDY_CACHE=0)."""
    if os.environ.get("NVL_TIDY_CACHE", "1") == "0":
        return {f: None for f in files}
    keys = Keys()
    return {f: keys.key(f, first[os.path.join(ROOT, f)]) for f in files}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tidy_test.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    if shutil.which("clang-tidy") is None:
        print("tidy: clang-tidy not installed (contrib/setup.sh installs it)")
        return 1
    if not os.path.isfile(os.path.join(build, "compile_commands.json")):
        print(f"tidy: no {build}/compile_commands.json")
        return 1
    os.chdir(ROOT)
    first = first_commands(build)
    files = linted_files(first)
    cache = os.path.join(build, "tidy-clean.json")
    known = {}
    try:
        with open(cache, encoding="utf-8") as f:
            known = json.load(f)
    except (OSError, ValueError):  # none yet, or unreadable: lint every file
        pass
    key = cache_keys(files, first)
    checked = [f for f in files if f not in PENDING]
    todo = [f for f in checked if key[f] is None or known.get(f) != key[f]]
    batches = [todo[i::JOBS] for i in range(JOBS) if todo[i::JOBS]]
    with tempfile.TemporaryDirectory() as work:
        results = lint(batches, first, work)
        now_clean = lint_pending([f for f in files if f in PENDING], first, work)
    clean = set(checked) - set(todo)
    clean.update(f for batch, ok in zip(batches, results) if ok for f in batch)
    with open(cache, "w", encoding="utf-8") as f:
        json.dump({f: key[f] for f in sorted(clean) if key[f] is not None}, f, indent=1)
    for f in now_clean:
        print(f"tidy: {f} is clean now: take it off PENDING in tests/structure/tidy_test.py")
    if not all(results) or now_clean:
        print(f"tidy: findings above (clang-tidy -p {build} FILE shows one file's)")
        return 1
    print(f"tidy: {len(checked)} files clean (placement/engine, plugin, contrib; {len(todo)} "
          f"linted now, the others unchanged since their clean run), {len(files) - len(checked)} "
          "pending")
    return 0


if __name__ == "__main__":
    sys.exit(main())
