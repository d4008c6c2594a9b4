#!/bin/sh
# What tracing costs the traced: ns per eventfd open+close (slabload) with
# no tracer, under cachescoped, and under bpftrace counting the same four
# slab tracepoints per process (a peer that keeps far less state: no live
# objects, no records).  Rounds alternate between the set-ups so that drift
# of this noisy VM hits all alike; medians and ratios are printed, then
# cachescoped's own per-program cost from the kernel's run-time accounting.
#
#   sudo bench/overhead.sh [ITERATIONS] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
N=${1:-200000}
R=${2:-5}
[ "$(id -u)" = 0 ] || { echo "overhead.sh: needs root" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

wait_ready() {	# $1: file that appears when the tracer is attached
	i=0
	until [ -e "$1" ] && grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 200 ] || { echo "tracer did not start" >&2; exit 1; }
		sleep 0.05
	done
}

have_bpftrace=0
command -v bpftrace >/dev/null 2>&1 && have_bpftrace=1
for r in $(seq "$R"); do
	"$B/bench/slabload" "$N" >> "$tmp/none"

	"$B/cachescoped" --socket "$tmp/cs.sock" --top 0 > "$tmp/cs.out.$r" 2>&1 &
	pid=$!
	until "$B/cachescope" --socket "$tmp/cs.sock" stats >/dev/null 2>&1; do sleep 0.05; done
	"$B/bench/slabload" "$N" >> "$tmp/cachescoped"
	kill -INT $pid; wait $pid

	if [ $have_bpftrace = 1 ]; then
		bpftrace -e 'tracepoint:kmem:kmem_cache_alloc,tracepoint:kmem:kmem_cache_free,
			tracepoint:kmem:kmalloc,tracepoint:kmem:kfree { @[pid] = count(); }
			BEGIN { printf("ready\n"); }' > "$tmp/bt.out" 2>&1 &
		pid=$!
		wait_ready "$tmp/bt.out" ready
		"$B/bench/slabload" "$N" >> "$tmp/bpftrace"
		kill -INT $pid; wait $pid || true
	fi
done

base=$(median < "$tmp/none")
cs=$(median < "$tmp/cachescoped")
echo "slabload: $N eventfd open+close per round, $R rounds, median ns per iteration"
printf '  %-12s %8.1f ns\n' "no tracer" "$base"
printf '  %-12s %8.1f ns  (%.2fx the untraced time)\n' "cachescoped" "$cs" "$(awk "BEGIN{print $cs / $base}")"
if [ $have_bpftrace = 1 ]; then
	bt=$(median < "$tmp/bpftrace")
	printf '  %-12s %8.1f ns  (%.2fx the untraced time)\n' "bpftrace" "$bt" "$(awk "BEGIN{print $bt / $base}")"
	printf '  cachescoped / bpftrace: %.2f\n' "$(awk "BEGIN{print $cs / $bt}")"
fi
echo "cachescoped events of the last timed round:"
grep -E '^events:' "$tmp/cs.out.$R" || true

# one more, untimed round with the kernel timing every program run (the
# accounting itself adds a little to each run)
"$B/cachescoped" --socket "$tmp/cs.sock" --top 0 --bpf-stats > "$tmp/cs.stats" 2>&1 &
pid=$!
until "$B/cachescope" --socket "$tmp/cs.sock" stats >/dev/null 2>&1; do sleep 0.05; done
"$B/bench/slabload" "$N" > /dev/null
kill -INT $pid; wait $pid
echo "cachescoped per-program cost (kernel.bpf_stats run-time accounting):"
grep -E '^  (btf|tp)_' "$tmp/cs.stats" || true
