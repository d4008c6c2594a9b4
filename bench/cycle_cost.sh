#!/bin/sh
# What sampling in time costs the daemon itself: the CPU of cachescoped
# (user + system, its whole run) over SECONDS with the programs attached
# all the time (--sample-time 1) and cycled (--sample-time 4: attached
# and detached ten times a second), on this host as it is (run it idle:
# the cost of a cycle is the kernel's text patching and its IPIs, not the
# load's), ROUNDS rounds alternating, medians.  Each BUILD folder (default
# build) is measured alike, so an older build can be set beside: the part
# above --sample-time 1 is what cycling costs, in % of one CPU.
#
#   sudo bench/cycle_cost.sh [SECONDS] [ROUNDS] [BUILD...]
set -eu
cd "$(dirname "$0")/.."
S=${1:-15}
R=${2:-3}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "${CS_BUILD:-build}"
[ "$(id -u)" = 0 ] || { echo "cycle_cost.sh: needs root" >&2; exit 1; }
case $S$R in *[!0-9]*) echo "cycle_cost.sh: SECONDS and ROUNDS are numbers" >&2; exit 2 ;; esac
for b in "$@"; do
	[ -x "$b/cachescoped" ] || { echo "cycle_cost.sh: no $b/cachescoped" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. bench/lib.sh

# cpu BUILD N: the daemon's CPU seconds over its run at --sample-time N
# (the shell's "times": its children's user and system time, 0m0.110s)
cpu() {
	(
		"$1/cachescoped" --sample-time "$2" --budget off --duration "$S" --top 0 \
			--socket "$tmp/cs.sock" > "$tmp/out" 2>&1 ||
			echo "cycle_cost.sh: $1/cachescoped failed: $(tail -1 "$tmp/out")" >&2
		times
	) | awk 'NR == 2 {
		t = 0
		for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] }
		print t
	}'
}
for r in $(seq "$R"); do
	i=0
	for b in "$@"; do
		cpu "$b" 1 >> "$tmp/$i.1"
		cpu "$b" 4 >> "$tmp/$i.4"
		grep '^sampling in time:' "$tmp/out" > "$tmp/$i.line" || true
		i=$((i + 1))
	done
done
echo "cachescoped's CPU over ${S} s, $R rounds, median seconds; cycling's part in % of one CPU"
i=0
for b in "$@"; do
	a=$(median < "$tmp/$i.1")
	c=$(median < "$tmp/$i.4")
	printf '  %-28s attached %.2f s  cycled (1/4) %.2f s  cycling %.1f %%\n' "$b" "$a" "$c" \
		"$(awk "BEGIN{print ($c - $a) / $S * 100}")"
	sed 's/^/    /' "$tmp/$i.line"
	i=$((i + 1))
done
