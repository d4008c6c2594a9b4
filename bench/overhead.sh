#!/bin/sh
# What tracing costs the traced: ns per eventfd open+close (slabload) with
# no tracer, under cachescoped (the whole pipeline, CSV on; by default, then
# with every object tracked, --sample 1, then sampling in time,
# --sample-time 4, and with the frees too, --sample-time-frees), under
# bpftrace
# counting the same four slab tracepoints per process (a peer that keeps
# far less state: no live objects, no records), under empty programs on
# the same tracepoints (bench/floor: the dispatch floor no tracer of these
# events goes below), under empty programs on the two free tracepoints
# alone (the floor of any tracer that sees every free: the most that
# sampling only the allocations in time can reach), and under bpftrace doing
# cachescoped's slab job (bench/peers/samejob.bt: per-pointer lifetimes,
# per-cache and per-process counts, 8-frame stacks).  Rounds alternate
# between the set-ups, each round starting one set-up later (lib.sh's
# tracer_rounds), so that drift of this noisy VM, and what one set-up
# leaves behind for the next, hits all alike;
# medians and throughput ratios (untraced time / traced time) are printed,
# then cachescoped's per-program cost: the kernel's mean and the programs'
# own median.
#
#   sudo bench/overhead.sh [ITERATIONS] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
N=${1:-200000}
R=${2:-7}
[ "$(id -u)" = 0 ] || { echo "overhead.sh: needs root" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. bench/lib.sh

have_bpftrace=0
command -v bpftrace >/dev/null 2>&1 && have_bpftrace=1
# the set-ups in rotated order (lib.sh): in a fixed order the untraced
# loop came right after bpftrace's teardown (its maps freed after a grace
# period) and ran twice as slow, every round: 1 207 ns against 570 ns
# alone, so that every tracer read faster than none
sl() { "$B/bench/slabload" "$N"; }
tracer_rounds "$R" "$tmp" sl

base=$(median < "$tmp/none")
echo "slabload: $N eventfd open+close per round, $R rounds, median ns per iteration"
row() { printf '  %-20s %8.1f ns  %.2fx the untraced throughput\n' "$1" "$2" "$(awk "BEGIN{print $base / $2}")"; }
printf '  %-20s %8.1f ns\n' "no tracer" "$base"
cs=$(median < "$tmp/cs")
row "cachescoped (csv)" "$cs"
row "  every object" "$(median < "$tmp/exact")"
row "  alloc 1/4 of time" "$(median < "$tmp/intime")"
row "  and frees too" "$(median < "$tmp/frees")"
[ -s "$tmp/floor" ] && row "empty programs" "$(median < "$tmp/floor")"
[ -s "$tmp/ffloor" ] && row "  free programs only" "$(median < "$tmp/ffloor")"
if [ $have_bpftrace = 1 ]; then
	bt=$(median < "$tmp/count")
	sj=$(median < "$tmp/samejob")
	row "bpftrace counting" "$bt"
	row "bpftrace same job" "$sj"
	printf '  cachescoped vs bpftrace same job: %.2fx its throughput\n' "$(awk "BEGIN{print $sj / $cs}")"
fi
echo "cachescoped events of the last timed round:"
grep -E '^(events|sampling):' "$tmp/cs.default.out" || true

# one more, untimed round with the kernel timing every program run (the
# accounting itself adds a little to each run)
"$B/cachescoped" --socket "$tmp/cs.sock" --top 0 --bpf-stats > "$tmp/cs.stats" 2>&1 &
pid=$!
cs_wait "$tmp/cs.sock" $pid
"$B/bench/slabload" "$N" > /dev/null
kill -INT $pid; wait $pid
echo "cachescoped per-program cost: the kernel's mean (bpf_stats), then the programs' own median and p90:"
grep -E '^  ((btf|tp)_|kmem_cache_|kmalloc |kfree |page_)' "$tmp/cs.stats" || true
grep -E '^sampling:' "$tmp/cs.stats" || true
