#!/bin/sh
# Golden helper: runs contrib/bench/gb200_sim.py ARGS... with the CLI under test
# ($NVLPLACE_BIN): the GB200 benchmark's job mix placed without Slurm, so that a change in any
# of its decisions or run times shows as a diff of tests/cli/golden/gb200-sim-*.out.
exec python3 "$(dirname "$0")/../../contrib/bench/gb200_sim.py" --cli "$NVLPLACE_BIN" "$@"
