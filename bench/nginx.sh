#!/bin/sh
# What tracing costs a real server: nginx (2 workers, a static page) under
# wrk (2 threads, 50 connections) on loopback, requests/s untraced, under
# cachescoped (CSV on, the whole pipeline; by default, then sampling in
# time, --sample-time 4, and with the frees too, --sample-time-frees,
# then with every object tracked, --sample 1),
# under empty programs on the four slab
# tracepoints (the dispatch floor, bench/floor; then on the two free ones
# alone), under bpftrace counting
# them, and under bpftrace doing cachescoped's slab job
# (bench/peers/samejob.bt).  Rounds alternate between the set-ups; medians
# and ratios; then what each tracer costs under the same load by the
# kernel's accounting (bench/lib.sh's tracer_cost).  Then one more round
# under cachescoped with --bpf-stats: the kernel's mean ns per run of
# each program under that load, and the programs' own median and 90th
# percentile.
#
#   sudo bench/nginx.sh [SECONDS] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
S=${1:-5}
R=${2:-3}
PORT=${NGINX_BENCH_PORT:-18932}
[ "$(id -u)" = 0 ] || { echo "nginx.sh: needs root" >&2; exit 1; }
for c in nginx wrk; do
	command -v $c >/dev/null 2>&1 || { echo "nginx.sh: no $c (make test-deps)" >&2; exit 1; }
done
tmp=$(mktemp -d)
ngx=
cleanup() {
	[ -z "$ngx" ] || kill "$ngx" 2>/dev/null || true
	cost_restore
	rm -rf "$tmp"
}
trap cleanup EXIT
. bench/lib.sh

nginx_start "$tmp" "$PORT"
rps() { wrk -t2 -c50 -d"${S}s" "http://127.0.0.1:$PORT/" | awk '/^Requests\/sec/ {print $2}'; }
tracer_rounds "$R" "$tmp" rps
echo "nginx + wrk -t2 -c50, ${S} s x $R rounds, median requests/s"
tracer_table "$tmp" req/s
nginx_load() { wrk -t2 -c50 -d10s "http://127.0.0.1:$PORT/" > /dev/null 2>&1 & ld=$!; }
tracer_cost "$tmp" 4 nginx_load
cost_table "$tmp" 4

cs_start "$tmp" --bpf-stats
rps > /dev/null
cs_stop
echo "cachescoped per-program cost under this load: the kernel's mean (bpf_stats,"
echo "an interrupt taken mid-run counts), then the programs' own median and p90:"
grep -E '^  (btf_(kmem|kmalloc|kfree|page)|kmem_cache_|kmalloc |kfree |page_)' "$tmp/cs.out" || true
grep -E '^(events|sampling|budget):' "$tmp/cs.out" || true
