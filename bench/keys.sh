#!/bin/sh
# Memory at a full key budget: cachescoped with its defaults traces the
# whole system while keyload keeps PROCS processes busy in some twenty slab
# caches each (more keys than the budget of 4096: the table stays full).
# Every INTERVAL seconds: keys, vectors in the history, the daemon's RSS
# and what makes it up (its rings' mappings, the rest of its files, its
# anonymous memory).  At the end, the largest RSS seen and the budget.
#
#   sudo bench/keys.sh [SECONDS] [PROCS] [INTERVAL]
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
D=${1:-90}
P=${2:-400}
I=${3:-10}
[ "$(id -u)" = 0 ] || { echo "keys.sh: needs root" >&2; exit 1; }
[ -x "$B/bench/keyload" ] || { echo "keys.sh: $B/bench/keyload missing: run make tests" >&2; exit 1; }
tmp=$(mktemp -d)
load=
cs=
cleanup() {
	[ -z "$load" ] || kill "$load" 2>/dev/null || true
	[ -z "$cs" ] || kill -INT "$cs" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

"$B/cachescoped" --duration $((D + 20)) --socket "$tmp/cs.sock" --top 0 > "$tmp/cs.out" 2>&1 &
cs=$!
. bench/lib.sh
cs_wait "$tmp/cs.sock" $cs
"$B/bench/keyload" "$P" 500 $((D + 5)) > "$tmp/load.out" &
load=$!
stat() { "$B/cachescope" --socket "$tmp/cs.sock" stats | awk -v k="$1" '$1 == k {print $2}'; }
# kB of RSS: all, of the rings (the bpf maps mapped), anonymous
mem() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / {name = $6} /^Rss:/ {all += $2; if (name == "anon_inode:bpf-map") ring += $2}
	     END {print all, ring}' /proc/$cs/smaps
}
printf '%6s %6s %8s %9s %9s %9s %9s\n' t_s keys vectors rss_MiB ring_MiB anon_MiB others_ev
max=0
e=0
while [ $e -lt "$D" ]; do
	sleep "$I"
	e=$((e + I))
	set -- $(mem)
	anon=$(awk '/RssAnon/ {print $2}' /proc/$cs/status)
	[ "$1" -le "$max" ] || { max=$1; maxkeys=$(stat keys); }
	printf '%6d %6s %8s %9.1f %9.1f %9.1f %9s\n' "$e" "$(stat keys)" "$(stat history_vectors)" \
		"$(awk "BEGIN{print $1 / 1024}")" "$(awk "BEGIN{print $2 / 1024}")" \
		"$(awk "BEGIN{print $anon / 1024}")" "$(stat others_events)"
done
wait "$load" || true
load=
cat "$tmp/load.out"
echo "cachescoped: largest RSS $(awk "BEGIN{printf \"%.1f\", $max / 1024}") MiB (with $maxkeys keys); budget 48 MiB"
kill -INT $cs; wait $cs || true
cs=
grep -E '^(events|keys):' "$tmp/cs.out" || true
