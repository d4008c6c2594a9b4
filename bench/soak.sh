#!/bin/sh
# Bounded under process churn: cachescoped with its defaults traces the
# whole system while a shell runs /bin/true in a loop.  Every INTERVAL
# seconds: the daemon's RSS, its CPU over the interval, keys, records
# produced and dropped, vectors in the history.  At the end: RSS at the
# first sample and at the end, the daemon's CPU over the run, the fork
# loop's rate (children/s, from the loop's own count), keys, drops.
#
#   sudo bench/soak.sh [SECONDS] [INTERVAL]
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
D=${1:-120}
I=${2:-10}
[ "$(id -u)" = 0 ] || { echo "soak.sh: needs root" >&2; exit 1; }
tmp=$(mktemp -d)
loop=
cs=
cleanup() {
	[ -z "$loop" ] || kill "$loop" 2>/dev/null || true
	[ -z "$cs" ] || kill -INT "$cs" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
hz=$(getconf CLK_TCK)

"$B/cachescoped" --duration $((D + 5)) --socket "$tmp/cs.sock" --top 0 > "$tmp/cs.out" 2>&1 &
cs=$!
. bench/lib.sh
cs_wait "$tmp/cs.sock" $cs
# the loop counts its children in a file every 1000
sh -c 'n=0; while :; do /bin/true; n=$((n + 1)); [ $((n % 1000)) -ne 0 ] || echo $n > '"$tmp"'/forks; done' &
loop=$!
t0=$(date +%s.%N)
cpu() { awk '{print $14 + $15}' /proc/$cs/stat; }
stat() { "$B/cachescope" --socket "$tmp/cs.sock" stats | awk -v k="$1" '$1 == k {print $2}'; }
c0=$(cpu)
first_rss=
printf '%6s %9s %6s %7s %12s %9s %8s\n' "t_s" "rss_MiB" "cpu%" "keys" "produced" "dropped" "vectors"
e=0
while [ $e -lt "$D" ]; do
	c1=$(cpu)
	sleep "$I"
	e=$((e + I))
	c2=$(cpu)
	rss=$(awk '/VmRSS/ {printf "%.1f", $2 / 1024}' /proc/$cs/status)
	[ -n "$first_rss" ] || first_rss=$rss
	printf '%6d %9s %6.1f %7s %12s %9s %8s\n' "$e" "$rss" \
		"$(awk "BEGIN{print 100 * ($c2 - $c1) / $hz / $I}")" \
		"$(stat keys)" "$(stat produced)" "$(stat dropped)" "$(stat history_vectors)"
done
t1=$(date +%s.%N)
forks=$(cat "$tmp/forks" 2>/dev/null || echo 0)
c3=$(cpu)
kill "$loop"; loop=
echo "fork loop: $forks children in ${D} s ($(awk "BEGIN{printf \"%.0f\", $forks / ($t1 - $t0)}")/s)"
echo "cachescoped: RSS $first_rss MiB at ${I} s, $rss MiB at ${D} s; CPU $(awk "BEGIN{printf \"%.1f\", 100 * ($c3 - $c0) / $hz / ($t1 - $t0)}") % of a core"
kill -INT $cs; wait $cs || true
cs=
grep -E '^(events|keys):' "$tmp/cs.out" || true
