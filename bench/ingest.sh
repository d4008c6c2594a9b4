#!/bin/sh
# The ingest ceiling: slab events per second that cachescoped (defaults,
# CSV on) takes in with no drop, from slabload's pipe loop in 1 and then
# as many worker processes as there are CPUs (pipe() and two closes, about
# 18 slab events each, scaling over CPUs), each for ITERATIONS.  Per run:
# events produced per second of the load, records dropped, the load's
# slowdown.  Above the ceiling drops are counted (per window in the
# daemon's stats and summary), never silent.
#
#   sudo bench/ingest.sh [ITERATIONS]
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
N=${1:-300000}
[ "$(id -u)" = 0 ] || { echo "ingest.sh: needs root" >&2; exit 1; }
tmp=$(mktemp -d)
cs=
cleanup() {
	[ -z "$cs" ] || kill -INT "$cs" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
ncpu=$(nproc)
. bench/lib.sh
stat() { "$B/cachescope" --socket "$tmp/cs.sock" stats | awk -v k="$1" '$1 == k {print $2}'; }

printf '%8s %14s %12s %10s %12s\n' "workers" "events/s" "dropped" "drop %" "ns/iter"
for w in 1 "$ncpu"; do
	# every object tracked: the ceiling of the full record path
	"$B/cachescoped" --socket "$tmp/cs.sock" --top 0 --csv "$tmp/cs.csv" --sample 1 \
		> "$tmp/cs.out" 2>&1 &
	cs=$!
	cs_wait "$tmp/cs.sock" $cs
	p0=$(stat produced); d0=$(stat dropped)
	t0=$(date +%s.%N)
	ns=$("$B/bench/slabload" "$N" "$w" pipe)
	t1=$(date +%s.%N)
	sleep 0.5	# the last window's records
	p1=$(stat produced); d1=$(stat dropped)
	kill -INT $cs; wait $cs || true
	cs=
	printf '%8s %14.0f %12s %10.3f %12s\n' "$w" \
		"$(awk "BEGIN{print ($p1 - $p0) / ($t1 - $t0)}")" "$((d1 - d0))" \
		"$(awk "BEGIN{print 100 * ($d1 - $d0) / ($p1 - $p0 + 1)}")" "$ns"
	grep -E '^events:' "$tmp/cs.out" | sed 's/^/         /'
done
