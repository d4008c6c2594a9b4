#!/bin/sh
# Side by side on the key-value server: redis-server (no persistence)
# under redis-benchmark's SET and GET (-c 50, N requests each), requests/s
# for each SET-UP, ROUNDS rounds, each round starting one set-up later
# (bench/lib.sh's tracer_rounds), medians and ratios to the first set-up.
# For comparing builds of cachescoped, or its options, against each other
# and against the floor in one run.
#
#   sudo bench/ab.sh ROUNDS SET-UP...
#
# A SET-UP is "none" (untraced), "floor" (bench/floor's empty programs, of
# $CS_BUILD or build/) or a build folder holding cachescoped and
# cachescope, optionally followed by cachescoped's options joined with
# commas: build,--sample-budget,5000.  N is $AB_REQUESTS (default 200000).
#
#   sudo bench/ab.sh 8 none floor build /tmp/other/build build,--sample,1024
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: bench/ab.sh ROUNDS SET-UP..." >&2; exit 2; }
R=$1
shift
case $R in '' | *[!0-9]*) echo "ab.sh: ROUNDS is not a number: $R" >&2; exit 2 ;; esac
N=${AB_REQUESTS:-200000}
PORT=${REDIS_BENCH_PORT:-18934}
FLOOR=${CS_BUILD:-build}
[ "$(id -u)" = 0 ] || { echo "ab.sh: needs root" >&2; exit 1; }
for c in redis-server redis-cli redis-benchmark; do
	command -v $c >/dev/null 2>&1 ||
		{ echo "ab.sh: no $c (apt-get install redis-server redis-tools)" >&2; exit 1; }
done
for s in "$@"; do
	case $s in
	none) ;;
	floor) [ -x "$FLOOR/bench/floor" ] || { echo "ab.sh: no $FLOOR/bench/floor (make tests)" >&2; exit 1; } ;;
	*) d=${s%%,*}
	   if [ ! -x "$d/cachescoped" ] || [ ! -x "$d/cachescope" ]; then
		echo "ab.sh: $d has no cachescoped and cachescope" >&2; exit 1
	   fi ;;
	esac
done
tmp=$(mktemp -d)
rds=
cleanup() {
	[ -z "$rds" ] || kill "$rds" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
. bench/lib.sh

redis_start "$tmp" "$PORT"
rps() { redis_rps "$PORT" "$N"; }

# one set-up, measured once; its numbers go to $tmp/s<index>
measure() {
	case $2 in
	none)	rps >> "$tmp/s$1" ;;
	floor)	B=$FLOOR; floor_start "$tmp"; rps >> "$tmp/s$1"; floor_stop ;;
	*)	B=${2%%,*}; _a=
		case $2 in *,*) _a=$(echo "${2#*,}" | tr , ' ') ;; esac
		# shellcheck disable=SC2086 # the options, split on purpose
		cs_start "$tmp" $_a; rps >> "$tmp/s$1"; cs_stop ;;
	esac
}

n=$#
for r in $(seq 0 $((R - 1))); do
	for j in $(seq 0 $((n - 1))); do
		i=$(((j + r) % n + 1))
		eval "s=\${$i}"
		measure "$i" "$s"
	done
done
echo "redis-server under redis-benchmark -c 50 -t set,get -n $N, $R rounds, median requests/s"
base=$(median < "$tmp/s1")
i=0
for s in "$@"; do
	i=$((i + 1))
	m=$(median < "$tmp/s$i")
	printf '  %-40s %8.0f req/s  %.3fx %s   rounds: %s\n' "$s" "$m" \
		"$(awk "BEGIN{print $m / $base}")" "$1" "$(tr '\n' ' ' < "$tmp/s$i" | sed 's/ $//')"
done
