#!/bin/sh
# Installs everything nvlplace needs on Debian bookworm: build tools, libraries, the local
# Slurm cluster's packages, Chromium (the replay report test), and Slurm's source (for the
# select plugin's internal headers).
# Idempotent: a second run installs nothing and downloads nothing.
# Usage: contrib/setup.sh [--slurm-releases]   (--slurm-releases: see below, as test.sh does)
set -eu
usage() { sed -n '2,6p' "$0"; }
case $#:${1:-} in
  0:|1:--slurm-releases) ;;
  1:-h|1:--help) usage; exit 0 ;;
  *) echo "setup.sh: unknown arguments: $*" >&2; usage >&2; exit 2 ;;
esac

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PACKAGES="build-essential cmake pkg-config python3 \
  libyaml-cpp-dev libabsl-dev libboost-dev libgtest-dev libgmock-dev libbenchmark-dev \
  libcli11-dev nlohmann-json3-dev clang-format clang-tidy clang libclang-rt-14-dev \
  slurmctld slurmd slurm-client munge libslurm-dev slurm-wlm-basic-plugins slurm-wlm-basic-plugins-dev \
  mariadb-server libmariadb-dev-compat slurmdbd \
  libmunge-dev libjson-c-dev libhttp-parser-dev libyaml-dev libdbus-1-dev libhwloc-dev liblz4-dev \
  dpkg-dev chromium iproute2 expect procps"

SUDO=
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi

missing=
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  $SUDO apt-get update -qq
  # No daemon is started at install time: the tests run their own Slurm cluster.
  DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

# The replay report's charting library: ECharts (Apache-2.0), pinned by version and by the
# registry's integrity hash, fetched from the npm registry into an ignored folder and never
# committed; `nvlplace replay` inlines it into report.html (without it, report.html keeps its
# plain SVG plots).
ECHARTS_VERSION=5.5.1  # also in contrib/CMakeLists.txt (NVLPLACE_DEFAULT_CHART_LIB)
ECHARTS_INTEGRITY=sha512-Fce8upazaAXUVUVsjgV6mBnGuqgO+JNDlcgF79Dksy4+wgGpQB2lmYoO4TSweFg/mZITdpGHomw/cNBJZj1icA==
CHART_DIR="$ROOT/third_party/npm/echarts-$ECHARTS_VERSION"
if [ ! -f "$CHART_DIR/echarts.min.js" ]; then
  if ! command -v npm >/dev/null; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm
  fi
  FETCH="$ROOT/third_party/npm/fetch"
  rm -rf "$FETCH"
  mkdir -p "$FETCH"
  got=$(cd "$FETCH" && npm pack --json "echarts@$ECHARTS_VERSION" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["integrity"])')
  if [ "$got" != "$ECHARTS_INTEGRITY" ]; then
    echo "setup: echarts-$ECHARTS_VERSION.tgz has integrity $got, not the pinned $ECHARTS_INTEGRITY" >&2
    exit 1
  fi
  tar -xzf "$FETCH/echarts-$ECHARTS_VERSION.tgz" -C "$FETCH" package/dist/echarts.min.js package/LICENSE
  mkdir -p "$CHART_DIR"
  mv "$FETCH/package/dist/echarts.min.js" "$FETCH/package/LICENSE" "$CHART_DIR/"
  rm -rf "$FETCH"
  echo "setup: ECharts $ECHARTS_VERSION in $CHART_DIR"
fi

# Slurm's source of the exact installed version, for src/slurmctld/slurmctld.h and friends.
# Fetched at build time into an ignored folder, never committed.
SLURM_VERSION=$(dpkg-query -W -f='${Version}' slurmctld)
SRC_DIR="$ROOT/third_party/slurm-src"
if [ ! -f "$SRC_DIR/.version" ] || [ "$(cat "$SRC_DIR/.version")" != "$SLURM_VERSION" ]; then
  if ! grep -rqs "^Types:.*deb-src" /etc/apt/sources.list.d/ && ! grep -qs "^deb-src" /etc/apt/sources.list; then
    echo "setup: adding deb-src entries mirroring the deb ones"
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
      $SUDO tee /etc/apt/sources.list.d/nvlplace-deb-src.sources >/dev/null
    $SUDO apt-get update -qq
  fi
  rm -rf "$SRC_DIR" "$ROOT/third_party/slurm-fetch"
  mkdir -p "$ROOT/third_party/slurm-fetch"
  # As root, apt downloads as its _apt user, which may not enter the checkout: stay root.
  SANDBOX=
  if [ "$(id -u)" -eq 0 ]; then SANDBOX="-o APT::Sandbox::User=root"; fi
  (cd "$ROOT/third_party/slurm-fetch" &&
    apt-get source -qq $SANDBOX --download-only "slurm-wlm=$SLURM_VERSION" &&
    dpkg-source -x --no-check ./*.dsc src >/dev/null)
  mv "$ROOT/third_party/slurm-fetch/src" "$SRC_DIR"
  rm -rf "$ROOT/third_party/slurm-fetch"
  echo "$SLURM_VERSION" > "$SRC_DIR/.version"
  echo "setup: Slurm $SLURM_VERSION source in $SRC_DIR"
fi

# With --slurm-releases (contrib/test.sh): the other Slurm releases of contrib/slurm/releases,
# built once into a cache outside the clone (contrib/slurm/release.sh), for the plugin builds
# and the integration tests on each. Skipped, with a note, when the release tarballs are not
# beside the clone (../shared/slurm, or NVLPLACE_SLURM_TARBALLS).
if [ "${1:-}" = --slurm-releases ]; then
  grep -v '^#' "$ROOT/contrib/slurm/releases" | while read -r version mode; do
    [ -n "$version" ] || continue
    flag=
    [ "$mode" = compile ] && flag=--configure-only
    rc=0
    "$ROOT/contrib/slurm/release.sh" $flag "$version" >/dev/null || rc=$?
    case $rc in
      0) ;;
      77) echo "setup: Slurm $version skipped: no release tarball (its plugin build and tests too)" ;;
      *) echo "setup: building Slurm $version failed (see above)" >&2; exit 1 ;;
    esac
  done
fi
