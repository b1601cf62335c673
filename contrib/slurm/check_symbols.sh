#!/bin/bash
# Checks that a built select_cons_tres_nvlplace.so exports exactly what a Slurm release's
# plugin loader resolves, node_select_syms[] of that release's select.c, plus the plugin's
# own symbols: no name missing (the loader would refuse the plugin) and none extra (a
# select_p_* of another release means the entry list is wrong for this one).
# Usage: contrib/slurm/check_symbols.sh RELEASE_SRC_DIR SO
set -euo pipefail

usage() { sed -n '2,6p' "$0"; }
if [[ $# -eq 1 && ($1 == -h || $1 == --help) ]]; then
  usage
  exit 0
fi
if [[ $# -ne 2 || $1 == -* || $2 == -* ]]; then
  echo "check_symbols.sh: give RELEASE_SRC_DIR and SO" >&2
  usage >&2
  exit 2
fi
src=$1
so=$2
own="plugin_name plugin_type plugin_version init fini nvlplace_submit_check"

select_c=
for f in src/interfaces/select.c src/common/select.c; do # 23.02+, then 22.05
  if [[ -f $src/$f ]]; then
    select_c=$src/$f
    break
  fi
done
if [[ -z $select_c ]]; then
  echo "$0: no src/interfaces/select.c or src/common/select.c in $src" >&2
  exit 2
fi
if [[ ! -f $so ]]; then
  echo "$0: no $so" >&2
  exit 2
fi
release=$(awk '$1 == "Version:" {print $2}' "$src/META")

# The quoted names from "node_select_syms[] = {" to the closing "};".
syms=$(sed -n '/node_select_syms\[\] *= *{/,/^};/p' "$select_c" | grep -o '"[A-Za-z0-9_]*"' |
  tr -d '"')
if [[ -z $syms ]]; then
  echo "$0: no node_select_syms[] in $select_c" >&2
  exit 2
fi
expected=$(printf '%s\n' $syms $own | sort -u)
exported=$(nm -D --defined-only "$so" | awk 'NF >= 3 {print $3}' | sed 's/@.*//' | sort -u)

missing=$(comm -23 <(echo "$expected") <(echo "$exported"))
extra=$(comm -13 <(echo "$expected") <(echo "$exported"))
if [[ -n $missing || -n $extra ]]; then
  echo "Slurm $release ($select_c): $so does not match"
  [[ -z $missing ]] || echo "  missing: "$missing
  [[ -z $extra ]] || echo "  extra: "$extra
  exit 1
fi
echo "Slurm $release: $(echo "$syms" | wc -l) node_select_syms + $(echo $own | wc -w) own" \
  "symbols, exactly the exports of $so"
