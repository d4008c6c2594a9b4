#!/bin/sh
# What tracing costs a key-value server: redis-server (no persistence) under
# redis-benchmark's SET and GET (-c 50, N requests each) on loopback, the
# requests/s of the two together (2N over the time of both), untraced,
# under cachescoped (CSV on; by default, then sampling in time,
# --sample-time 4, and with the frees too, --sample-time-frees, then
# with every object tracked, --sample 1), under
# empty programs on the four slab tracepoints (the
# dispatch floor, bench/floor; then on the two free ones alone), under
# bpftrace counting them and under
# bpftrace doing cachescoped's slab job.  Rounds alternate between the
# set-ups; medians and ratios; then what each tracer costs under the same
# load by the kernel's accounting (bench/lib.sh's tracer_cost), and the
# budget line of one more round.
#
#   sudo bench/redis.sh [REQUESTS] [ROUNDS]      (default 200000 3)
#
# redis-server and redis-benchmark come with the Debian packages
# redis-server and redis-tools, which neither make deps nor make test
# installs (bench/README.md).
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
N=${1:-200000}
R=${2:-3}
PORT=${REDIS_BENCH_PORT:-18933}
[ "$(id -u)" = 0 ] || { echo "redis.sh: needs root" >&2; exit 1; }
for c in redis-server redis-cli redis-benchmark; do
	command -v $c >/dev/null 2>&1 ||
		{ echo "redis.sh: no $c (apt-get install redis-server redis-tools)" >&2; exit 1; }
done
tmp=$(mktemp -d)
rds=
cleanup() {
	[ -z "$rds" ] || kill "$rds" 2>/dev/null || true
	cost_restore
	rm -rf "$tmp"
}
trap cleanup EXIT
. bench/lib.sh

# a server of our own on its own port, nothing written to disk
redis_start "$tmp" "$PORT"
rps() { redis_rps "$PORT" "$N"; }
tracer_rounds "$R" "$tmp" rps
echo "redis-server under redis-benchmark -c 50 -t set,get -n $N, $R rounds, median requests/s"
tracer_table "$tmp" req/s
redis_load() { redis-benchmark -p "$PORT" -c 50 -n $((N * 20)) -t set,get -q > /dev/null 2>&1 & ld=$!; }
tracer_cost "$tmp" 4 redis_load
cost_table "$tmp" 4

cs_start "$tmp"
rps > /dev/null
cs_stop
grep -E '^(events|sampling|budget):' "$tmp/cs.out" || true
