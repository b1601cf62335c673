#!/bin/sh
# `-o PATH` where PATH is not a regular file: the CLI writes through it instead of renaming
# its temporary file over it. As root, `nvlplace import slurm ... -o /dev/null` once replaced
# the machine's /dev/null with a regular file (2026-11-28); a FIFO and a symbolic link stand
# in for the device here. Usage: write_through.sh NVLPLACE_BINARY
set -eu
BIN=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"
conf=$ROOT/tests/fixtures/irregular
fail() { echo "write_through: $*" >&2; exit 1; }
# The regular way: the file itself, written whole.
"$BIN" import slurm --topology "$conf/topology.conf" --gres "$conf/gres.conf" -o plain.yaml
[ -f plain.yaml ] && [ ! -L plain.yaml ] || fail "plain.yaml is not a regular file"
[ ! -e plain.yaml.tmp ] || fail "plain.yaml.tmp left behind"
# A FIFO stays a FIFO; what is read from it is the whole output.
mkfifo pipe
cat pipe >piped.yaml &
reader=$!
"$BIN" import slurm --topology "$conf/topology.conf" --gres "$conf/gres.conf" -o pipe
# Replaced, the FIFO never sees a writer and its reader waits for ever: stop it first.
[ -p pipe ] || { kill "$reader"; fail "the FIFO was replaced by $(ls -l pipe)"; }
wait "$reader"
[ ! -e pipe.tmp ] || fail "pipe.tmp left behind"
cmp -s plain.yaml piped.yaml || fail "what came through the FIFO differs from plain.yaml"
# A symbolic link stays a link; its target gets the output.
: >target.yaml
ln -s target.yaml link.yaml
"$BIN" import slurm --topology "$conf/topology.conf" --gres "$conf/gres.conf" -o link.yaml
[ -L link.yaml ] || fail "the link was replaced by $(ls -l link.yaml)"
cmp -s plain.yaml target.yaml || fail "the link's target differs from plain.yaml"
echo "write_through: regular file, FIFO and symbolic link written as expected"
