#!/bin/sh
# Many busy long-lived processes (issue 24, item 3): keyload --light starts
# PROCS processes that each open, read and close a file and make and close
# an eventfd every 20 ms (600 of them: 30 000 iterations a second, each its
# own keys: they live past the fold age), for SECONDS under cachescoped
# with its defaults and a CSV (--budget 25 among them), for each PROCS
# given.  Per run: records produced and dropped, the keys now and turned
# away, the daemon's peak RSS (VmHWM) and CPU, what the budget did, the
# sampler at the end, and the load's own iterations.
#
#   sudo bench/manyproc.sh [SECONDS] [PROCS...]     (default 32 600 1200)
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
D=${1:-32}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- 600 1200
[ "$(id -u)" = 0 ] || { echo "manyproc.sh: needs root" >&2; exit 1; }
[ -x "$B/bench/keyload" ] || { echo "manyproc.sh: $B/bench/keyload missing: run make tests" >&2; exit 1; }
. bench/lib.sh
tmp=$(mktemp -d)
cs=
cleanup() {
	[ -z "$cs" ] || kill -INT "$cs" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
hz=$(getconf CLK_TCK)
# a process has as many files open as the load needs (1 200 processes)
ulimit -n 65536 2>/dev/null || true

printf '%6s %10s %8s %7s %8s %8s %6s %9s  %s\n' procs produced dropped keys turned rss_MiB cpu% "iter/s" "budget at the end"
for p in "$@"; do
	"$B/cachescoped" --duration $((D + 8)) --socket "$tmp/cs.sock" --top 0 \
		--csv "$tmp/cs.csv" > "$tmp/cs.out" 2>&1 &
	cs=$!
	cs_wait "$tmp/cs.sock" $cs
	c0=$(awk '{print $14 + $15}' /proc/$cs/stat)
	t0=$(date +%s.%N)
	"$B/bench/keyload" "$p" 20 "$D" --light > "$tmp/load.out"
	t1=$(date +%s.%N)
	c1=$(awk '{print $14 + $15}' /proc/$cs/stat)
	hwm=$(awk '/VmHWM/ {printf "%.1f", $2 / 1024}' /proc/$cs/status)
	load1=$(cut -d' ' -f1 /proc/loadavg)
	kill -INT $cs; wait $cs || true
	cs=
	it=$(awk '{print $4}' "$tmp/load.out")
	prod=$(grep -oE 'produced=[0-9]+' "$tmp/cs.out" | cut -d= -f2)
	drop=$(grep -oE ' dropped=[0-9]+ \(' "$tmp/cs.out" | tr -cd '0-9')
	keys=$(grep -oE '^keys: now=[0-9]+' "$tmp/cs.out" | cut -d= -f2)
	turned=$(grep -oE '^keys: now=[0-9]+ dropped=[0-9]+' "$tmp/cs.out" | sed 's/.*dropped=//')
	bud=$(grep -m1 '^budget:' "$tmp/cs.out" | sed 's/^budget: //; s/; cost in the last second.*over in/, over in/')
	printf '%6d %10s %8s %7s %8s %8s %6.1f %9.0f  %s\n' "$p" "$prod" "$drop" "$keys" "$turned" "$hwm" \
		"$(awk "BEGIN{print 100 * ($c1 - $c0) / $hz / ($t1 - $t0)}")" \
		"$(awk "BEGIN{print $it / $D}")" "$bud"
	echo "  load average at the end: $load1"
	grep -E '^(events|sampling|budget|keys):' "$tmp/cs.out" | sed 's/^/  /'
done
