#!/bin/sh
# What tracing costs an inference workload: kvref's tokens/s alone and
# while cachescoped traces the whole system (BPF programs, rings, vectors,
# clustering every second), in alternating rounds; medians and the ratio.
#
#   sudo bench/kvref_overhead.sh [SECONDS] [ROUNDS] [SCENARIO]
#   sudo BACKEND=cuda bench/kvref_overhead.sh ...   (a GPU; kvref --backend cuda)
#
# With BACKEND=cuda a third kind of round runs kvref with the CUPTI library
# injected but no daemon (CUPTI's own cost: records collected, probes not
# attached), and the traced rounds inject it too (probes attached).
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
S=${1:-10}
R=${2:-3}
SC=${3:-normal}
BE=${BACKEND:-cpu}
LIB=$(readlink -f "$B/libcachescope_cupti.so" 2>/dev/null || true)
[ "$BE" = cpu ] || [ -e "$LIB" ] || { echo "kvref_overhead.sh: BACKEND=$BE needs $B/libcachescope_cupti.so" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "kvref_overhead.sh: needs root" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. bench/lib.sh
# tps [inject]: one round of kvref, its tokens/s; inject: with the CUPTI library
tps() {
	if [ "${1:-}" = inject ] && [ "$BE" = cuda ]; then
		env CUDA_INJECTION64_PATH="$LIB" "$B/kvref" --backend "$BE" --scenario "$SC" --duration "$S" -q
	else
		"$B/kvref" --backend "$BE" --scenario "$SC" --duration "$S" -q
	fi | sed -n 's/^kvref: .* \([0-9.]*\) tokens\/s$/\1/p'
}

for r in $(seq "$R"); do
	tps >> "$tmp/alone"
	[ "$BE" = cpu ] || tps inject >> "$tmp/cupti"
	"$B/cachescoped" --socket "$tmp/cs.sock" --top 0 > "$tmp/cs.out" 2>&1 &
	pid=$!
	cs_wait "$tmp/cs.sock" $pid
	tps inject >> "$tmp/traced"
	kill -INT $pid
	wait $pid
	grep '^events:' "$tmp/cs.out" >> "$tmp/events"
done
a=$(median < "$tmp/alone")
t=$(median < "$tmp/traced")
echo "kvref --backend $BE --scenario $SC, ${S} s a round, $R rounds, median tokens/s (2 workers, $(nproc) CPUs)"
printf '  %-24s %8.0f tokens/s\n' "alone" "$a"
if [ "$BE" != cpu ]; then
	c=$(median < "$tmp/cupti")
	printf '  %-24s %8.0f tokens/s  (%.3fx)\n' "CUPTI injected" "$c" "$(awk "BEGIN{print $c / $a}")"
fi
printf '  %-24s %8.0f tokens/s  (%.3fx)\n' "under cachescoped" "$t" "$(awk "BEGIN{print $t / $a}")"
echo "cachescoped events per traced round:"
sed 's/^/  /' "$tmp/events"
