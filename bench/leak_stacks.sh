#!/bin/sh
# What the leak stacks cost (--leak-stacks): ns per eventfd open+close of
# slabload with no tracer and under cachescoped with stacks off (0), at
# the default (64 a second per process) and at 512, on two loads: balanced
# churn (no key suspected of leaking: the programs read one flag and take
# no stack) and churn that keeps every 100th eventfd (a leak amid churn,
# timed after 2 s, once its keys are suspects and their stacks are taken).
# Rounds alternate between the set-ups; medians and throughput ratios
# (against stacks off) are printed, with the last leak round's stack
# counters (taken, unwound, kept) and the daemon's time unwinding.
#
#   sudo bench/leak_stacks.sh [ITERATIONS] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
N=${1:-300000}
R=${2:-5}
[ "$(id -u)" = 0 ] || { echo "leak_stacks.sh: needs root" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. bench/lib.sh

# run LOAD SETUP ROUND [ARGS...]: slabload under cachescoped ARGS (or none)
run() {
	load=$1 setup=$2 r=$3
	shift 3
	if [ "$setup" = none ]; then
		"$B/bench/slabload" $N $([ "$load" = leak ] && echo 1 leak) >> "$tmp/$load.$setup"
		return
	fi
	"$B/cachescoped" --socket "$tmp/cs.sock" --top 0 "$@" > "$tmp/cs.$load.$setup.$r" 2>&1 &
	pid=$!
	cs_wait "$tmp/cs.sock" $pid
	"$B/bench/slabload" $N $([ "$load" = leak ] && echo 1 leak) >> "$tmp/$load.$setup"
	kill -INT $pid; wait $pid
}

for r in $(seq "$R"); do
	for load in balanced leak; do
		run $load none $r
		run $load off $r --leak-stacks 0
		run $load 64 $r
		run $load 512 $r --leak-stacks 512
	done
done

echo "slabload: $N eventfd open+close per round ($R rounds), median ns per iteration"
for load in balanced leak; do
	off=$(median < "$tmp/$load.off")
	echo "$load:"
	printf '  %-24s %8.1f ns\n' "no tracer" "$(median < "$tmp/$load.none")"
	printf '  %-24s %8.1f ns\n' "cachescoped, stacks off" "$off"
	for s in 64 512; do
		v=$(median < "$tmp/$load.$s")
		printf '  %-24s %8.1f ns  %.3fx the throughput with stacks off\n' \
			"cachescoped, $s/s" "$v" "$(awk "BEGIN{print $off / $v}")"
		echo "    $(grep '^stacks:' "$tmp/cs.$load.$s.$R" || echo 'stacks: (no line)')"
	done
done
