#!/bin/sh
# What tracing costs a real server: nginx (2 workers, a static page) under
# wrk (2 threads, 50 connections) on loopback, requests/s untraced, under
# cachescoped (CSV on, the whole pipeline; by default, then with every
# object tracked, --sample 1), under bpftrace counting the
# four slab tracepoints, and under bpftrace doing cachescoped's slab job
# (bench/peers/samejob.bt).  Rounds alternate between the set-ups; medians
# and ratios.  Then one more round under cachescoped with --bpf-stats: the
# kernel's mean ns per run of each program under that load, and the
# programs' own median and 90th percentile.
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
have_bt=0
command -v bpftrace >/dev/null 2>&1 && have_bt=1
tmp=$(mktemp -d)
ngx=
cleanup() {
	[ -z "$ngx" ] || kill "$ngx" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
. bench/lib.sh

mkdir -p "$tmp/www"
echo "cachescope nginx bench" > "$tmp/www/index.html"
cat > "$tmp/nginx.conf" <<CONF
worker_processes 2;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $tmp/body; proxy_temp_path $tmp/proxy;
	fastcgi_temp_path $tmp/fcgi; uwsgi_temp_path $tmp/uwsgi; scgi_temp_path $tmp/scgi;
	server { listen 127.0.0.1:$PORT; root $tmp/www; }
}
CONF
nginx -c "$tmp/nginx.conf" -p "$tmp" &
ngx=$!
i=0
until wrk -t1 -c1 -d1s "http://127.0.0.1:$PORT/" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 50 ] || { echo "nginx.sh: nginx did not answer" >&2; exit 1; }
	sleep 0.1
done

rps() { wrk -t2 -c50 -d"${S}s" "http://127.0.0.1:$PORT/" | awk '/^Requests\/sec/ {print $2}'; }
wait_line() {	# FILE TEXT: wait for a tracer to say it is attached
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 400 ] || { echo "nginx.sh: tracer did not start" >&2; exit 1; }
		sleep 0.05
	done
}
cs_start() {	# extra args
	"$B/cachescoped" --socket "$tmp/cs.sock" --top 0 --csv "$tmp/cs.csv" "$@" > "$tmp/cs.out" 2>&1 &
	cs=$!
	cs_wait "$tmp/cs.sock" $cs
}
bt_round() {	# SCRIPT OUT
	BPFTRACE_MAP_KEYS_MAX=262144 bpftrace "$1" > "$tmp/bt.out" 2>&1 &
	bt=$!
	wait_line "$tmp/bt.out" ready
	rps >> "$2"
	stop_peer $bt
}

for r in $(seq "$R"); do
	rps >> "$tmp/none"
	cs_start
	rps >> "$tmp/cs"
	kill -INT $cs; wait $cs
	cs_start --sample 1
	rps >> "$tmp/exact"
	kill -INT $cs; wait $cs
	if [ $have_bt = 1 ]; then
		bt_round bench/peers/count.bt "$tmp/count"
		bt_round bench/peers/samejob.bt "$tmp/samejob"
	fi
done

base=$(median < "$tmp/none")
echo "nginx + wrk -t2 -c50, ${S} s x $R rounds, median requests/s"
row() { printf '  %-22s %10.0f req/s  %.2fx untraced\n' "$1" "$2" "$(awk "BEGIN{print $2 / $base}")"; }
printf '  %-22s %10.0f req/s\n' "untraced" "$base"
row "cachescoped (csv)" "$(median < "$tmp/cs")"
row "  every object" "$(median < "$tmp/exact")"
if [ $have_bt = 1 ]; then
	row "bpftrace counting" "$(median < "$tmp/count")"
	row "bpftrace same job" "$(median < "$tmp/samejob")"
fi

cs_start --bpf-stats
rps > /dev/null
kill -INT $cs; wait $cs
echo "cachescoped per-program cost under this load: the kernel's mean (bpf_stats,"
echo "an interrupt taken mid-run counts), then the programs' own median and p90:"
grep -E '^  (btf_(kmem|kmalloc|kfree|page)|kmem_cache_|kmalloc |kfree |page_)' "$tmp/cs.out" || true
grep -E '^(events|sampling|budget):' "$tmp/cs.out" || true
