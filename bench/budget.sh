#!/bin/sh
# --budget under a server's load (issue 24, item 2): nginx (2 workers)
# under wrk -t2 -c50 the whole time, and beside it cachescoped --budget P
# --workload W (kvref making the traffic of W, the labels of each phase
# scored), for each budget P given and W in false_sharing and leak.  Per
# run: the tracing cost the daemon measured each second (BPF programs +
# its own CPU, as --budget counts it) after the first SETTLE seconds,
# median and highest, the seconds over the budget, what the budget did
# (records budget, programs shed), nginx's requests/s against untraced,
# kvref's tokens/s and whether the workload's label was found.
#
#   sudo bench/budget.sh [SECONDS] [BUDGET...]     (default 30 10 5)
#   BUDGET_DAEMON_ARGS="--sample-time auto" sudo bench/budget.sh ...
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
S=${1:-30}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- 10 5
SETTLE=${BUDGET_SETTLE:-8}
PORT=${NGINX_BENCH_PORT:-18934}
[ "$(id -u)" = 0 ] || { echo "budget.sh: needs root" >&2; exit 1; }
for c in nginx wrk; do
	command -v $c >/dev/null 2>&1 || { echo "budget.sh: no $c (make test-deps)" >&2; exit 1; }
done
tmp=$(mktemp -d)
ngx= cs= wrk=
cleanup() {
	for p in $cs $wrk $ngx; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
. bench/lib.sh

nginx_start "$tmp" "$PORT"
load() {	# SECONDS: wrk's requests/s
	wrk -t2 -c50 -d"$1s" "http://127.0.0.1:$PORT/" | awk '/^Requests\/sec/ {print $2}'
}
base=$(load 10)
echo "nginx + wrk -t2 -c50 throughout; untraced $base req/s (10 s)"
printf '%-7s %-14s %8s %8s %6s %8s %8s %9s  %-22s %s\n' budget workload "cost_med" "cost_max" over \
	"records" "nginx" "tokens/s" "shed at the end" "label"
for p in "$@"; do
	for w in false_sharing leak; do
		load $((S + 2)) > "$tmp/wrk.out" &
		wrk=$!
		# shellcheck disable=SC2086
		"$B/cachescoped" --budget "$p" --workload "$w" --duration "$S" --top 0 \
			--socket "$tmp/cs.sock" ${BUDGET_DAEMON_ARGS:-} > "$tmp/cs.out" 2>&1 &
		cs=$!
		cs_wait "$tmp/cs.sock" $cs
		: > "$tmp/cost"
		t=0
		while kill -0 $cs 2>/dev/null; do
			sleep 1
			t=$((t + 1))
			[ $t -gt "$SETTLE" ] || continue
			"$B/cachescope" --socket "$tmp/cs.sock" status -j 2>/dev/null |
				grep -o '"budget_cost_pct":[0-9.]*' | cut -d: -f2 >> "$tmp/cost" || true
		done
		wait $cs || true
		cs=
		wait $wrk || true
		wrk=
		med=$(median < "$tmp/cost")
		max=$(sort -n "$tmp/cost" | tail -1)
		over=$(sed -n 's/^budget: .*over in \([0-9]*\) of \([0-9]*\) seconds.*/\1\/\2/p' "$tmp/cs.out")
		rec=$(sed -n 's/^budget: .*slab records budget \([0-9]*\)\/s.*/\1/p' "$tmp/cs.out")
		shed=$(sed -n 's/^budget: .*shed now \([^ ]*\) .*/\1/p' "$tmp/cs.out")
		tok=$(sed -n 's/^kvref: .* \([0-9.]*\) tokens\/s$/\1/p' "$tmp/cs.out" | head -1)
		lab=$(grep -E "^  $w +expected" "$tmp/cs.out" | sed 's/.*-> //' | head -1)
		printf '%-7s %-14s %7.1f%% %7.1f%% %6s %8s %7.2fx %9s  %-22s %s\n' "$p%" "$w" \
			"${med:-0}" "${max:-0}" "$over" "$rec" \
			"$(awk "BEGIN{print $(cat "$tmp/wrk.out") / $base}")" "$tok" "$shed" "${lab:-?}"
		grep -E "^  $w +expected|^(budget|sampling):" "$tmp/cs.out" | sed 's/^ */    /'
		grep -q '^budget:' "$tmp/cs.out" || { echo "    no summary: the daemon's last lines:"; tail -5 "$tmp/cs.out" | sed 's/^/    /'; }
	done
done
