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
# Then the programs' cost, which requests/s on this VM cannot resolve to a
# point: each traced set-up once more under the same load, with the
# kernel's own accounting on (kernel.bpf_stats_enabled; cachescoped's
# --bpf-stats is not used: its programs then time themselves, which
# doubles an untracked alloc's cost), $AB_COST_S seconds (default 4): the
# slab programs' mean ns a run and runs a second, their CPU in all and the
# daemon's, as shares of one CPU.  AB_COST_S=0 skips it.
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
COST_S=${AB_COST_S:-4}
case $COST_S in '' | *[!0-9]*) echo "ab.sh: AB_COST_S is not a number: $COST_S" >&2; exit 2 ;; esac
tmp=$(mktemp -d)
rds=
cleanup() {
	[ -z "$rds" ] || kill "$rds" 2>/dev/null || true
	cost_restore
	rm -rf "$tmp"
}
trap cleanup EXIT
. bench/lib.sh

redis_start "$tmp" "$PORT"
rps() { redis_rps "$PORT" "$N"; }

# a set-up's tracer started and stopped (none: nothing); cs or fl its pid
setup_start() {
	cs=
	case $1 in
	none)	;;
	floor)	B=$FLOOR; floor_start "$tmp" ;;
	*)	B=${1%%,*}; _a=
		case $1 in *,*) _a=$(echo "${1#*,}" | tr , ' ') ;; esac
		# shellcheck disable=SC2086 # the options, split on purpose
		cs_start "$tmp" $_a ;;
	esac
}
# a second of quiet after a tracer's exit: its maps are freed behind it
setup_stop() {
	case $1 in none) ;; floor) floor_stop; sleep 1 ;; *) cs_stop; sleep 1 ;; esac
}

# one set-up, measured once; its numbers go to $tmp/s<index>
measure() {
	setup_start "$2"
	rps >> "$tmp/s$1"
	setup_stop "$2"
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

[ "$COST_S" -gt 0 ] || exit 0
# id, program (less its btf_ or floor_ prefix), run_time_ns, run_cnt
progs() {
	bpftool prog show | awk '/ name (btf|floor)_(kmem_cache_alloc|kmem_cache_free|kmalloc|kfree) / {
		for (i = 1; i < NF; i++) {
			if ($i == "name") n = $(i + 1)
			if ($i == "run_time_ns") t = $(i + 1)
			if ($i == "run_cnt") c = $(i + 1)
		}
		sub(/^(btf|floor)_/, "", n)
		print $1, n, t, c
	}'
}
echo "the slab programs under the same load, the kernel's accounting, $COST_S s each:" \
	"mean ns a run, thousands of runs a second; their CPU and the daemon's, % of one CPU"
stats_on
hz=$(getconf CLK_TCK)
for s in "$@"; do
	[ "$s" != none ] || continue
	setup_start "$s"
	redis-benchmark -p "$PORT" -c 50 -n $((N * 10)) -t set,get -q > /dev/null 2>&1 &
	bp=$!
	sleep 2
	progs > "$tmp/p0"
	d0=0; [ -z "$cs" ] || d0=$(proc_ticks "$cs")
	sleep "$COST_S"
	progs > "$tmp/p1"
	d1=0; [ -z "$cs" ] || d1=$(proc_ticks "$cs")
	kill "$bp" 2>/dev/null || true
	wait "$bp" 2>/dev/null || true
	setup_stop "$s"
	awk -v s="$s" -v T="$COST_S" -v d=$((d1 - d0)) -v hz="$hz" '
		NR == FNR { t[$1] = $3; c[$1] = $4; next }
		($1 in t) && $4 > c[$1] {
			dt = $3 - t[$1]; dc = $4 - c[$1]; all += dt
			out = out sprintf(" %s %.0f ns x%.0fk", $2, dt / dc, dc / T / 1000)
		}
		END { printf "  %-40s%s; programs %.1f%%, daemon %.1f%%\n", s, out, all / T / 1e7, d / hz / T * 100 }
	' "$tmp/p0" "$tmp/p1"
done
