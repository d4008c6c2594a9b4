#!/bin/sh
# What the daemon's row path makes of recorded records: each input of the
# ingest harness (its seeds, or the files given) run once through
# fuzz_ingest with CS_INGEST_DUMP set, its export rows and clusters written
# to OUT/<input>.out.  Two builds' OUT directories compared (cmp) tell
# whether a change of the path changed any output:
#
#   tests/fuzz/dump.sh FUZZ_BIN OUT [INPUT...]
set -eu
[ $# -ge 2 ] || { echo "usage: tests/fuzz/dump.sh FUZZ_BIN OUT [INPUT...]" >&2; exit 2; }
bin=$1 out=$2
shift 2
[ -x "$bin" ] || { echo "dump.sh: $bin: no such harness (make fuzz-bins)" >&2; exit 1; }
[ $# -gt 0 ] || set -- "$(dirname "$0")"/corpus/ingest/*
mkdir -p "$out"
for f in "$@"; do
	CS_INGEST_DUMP="$out/$(basename "$f").out" "$bin" -runs=1 "$f" >/dev/null 2>&1 ||
		{ echo "dump.sh: $f: the harness failed" >&2; exit 1; }
done
echo "$# inputs dumped to $out"
