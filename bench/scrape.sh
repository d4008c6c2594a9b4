#!/bin/sh
# What a Prometheus scrape of cachescoped costs, beside what the CLI's own
# request costs from the same daemon in the same run, and whether scrapers
# that hold connections open stall ingest.
#
#   sudo bench/scrape.sh [N]        (N scrapes and N CLI requests, default 200)
#
# The daemon runs kvref's leak scenario (--workload leak), so the keys and
# the history are those of a traced inference process.  Prints the median
# and p90 of curl's time_total for GET /metrics and of `cachescope status`,
# their ratio, the body's size and series, and the daemon's drop count
# while 4 idle connections sat on the endpoint.
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
. bench/lib.sh
N=${1:-200}
PORT=19464
SOCK=/tmp/cs-scrape.$$.sock
OUT=$(mktemp -d /tmp/cs-scrape.XXXXXX)
trap 'kill $D 2>/dev/null; rm -rf "$OUT"' EXIT

[ "$(id -u)" = 0 ] || { echo "scrape.sh: needs root (cachescoped loads BPF programs)" >&2; exit 1; }
command -v curl >/dev/null || { echo "scrape.sh: needs curl (make test-deps)" >&2; exit 1; }

"$B/cachescoped" --workload leak --duration 40 --metrics-addr 127.0.0.1:$PORT \
	--socket "$SOCK" --top 0 > "$OUT/daemon.txt" 2>&1 &
D=$!
cs_wait "$SOCK" $D
sleep 8	# keys, vectors and clusters to render

# 4 scrapers (half of HTTPD_MAX_CONNS) that connect and never send a
# request; the daemon closes each after 5 s idle
i=0
while [ $i -lt 4 ]; do
	bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT && sleep 30" 2>/dev/null &
	i=$((i + 1))
done

curl -s -o "$OUT/body" "http://127.0.0.1:$PORT/metrics"
bytes=$(wc -c < "$OUT/body")
series=$(grep -vc '^#' "$OUT/body")
i=0
while [ $i -lt "$N" ]; do
	curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$PORT/metrics"
	i=$((i + 1))
done > "$OUT/scrape"
i=0
while [ $i -lt "$N" ]; do
	s=$(date +%s%N)
	"$B/cachescope" --socket "$SOCK" status > /dev/null
	e=$(date +%s%N)
	echo "$(( (e - s) / 1000 ))"
	i=$((i + 1))
done > "$OUT/cli"
wait $D || true
D=

ms() { awk '{printf "%.2f\n", $1 * 1000}'; }
p90() { sort -n | awk '{v[NR]=$1} END {print v[int(NR * 0.9 + 0.5)]}'; }
s50=$(ms < "$OUT/scrape" | median)
s90=$(ms < "$OUT/scrape" | p90)
c50=$(awk '{printf "%.2f\n", $1 / 1000}' "$OUT/cli" | median)
c90=$(awk '{printf "%.2f\n", $1 / 1000}' "$OUT/cli" | p90)
drops=$(sed -n 's/.*dropped=\([0-9]*\).*/\1/p' "$OUT/daemon.txt" | head -1)
echo "scrape.sh: $N requests each, 4 idle connections opened on the endpoint"
printf '  GET /metrics        median %6s ms  p90 %6s ms  (%s bytes, %s series)\n' "$s50" "$s90" "$bytes" "$series"
printf '  cachescope status   median %6s ms  p90 %6s ms  (process start included)\n' "$c50" "$c90"
awk -v s="$s50" -v c="$c50" 'BEGIN { printf "  ratio scrape / CLI request: %.2fx\n", s / c }'
echo "  daemon: dropped=${drops:-?} events over the run"
