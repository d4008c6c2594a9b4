#!/bin/sh
# make run: trace the whole system for 12 seconds while making each pattern
# happen for a physical reason (an fd leak, a file re-read after its pages
# were dropped, a socketpair ping-pong between two CPUs), ask the running
# daemon for its live view, then print the busiest keys, the cluster table
# and the summary.  The CSV of the run is left in build/run.csv.
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
H=$B/tests/helpers

if [ "$(id -u)" != 0 ]; then
	echo "cachescope: make run loads BPF programs and needs root (sudo make run)" >&2
	exit 1
fi

sock=$B/run.sock
"$B/cachescoped" --duration 12 --csv "$B/run.csv" --socket "$sock" --top 10 &
daemon=$!
i=0
until "$B/cachescope" --socket "$sock" stats >/dev/null 2>&1; do
	i=$((i + 1))
	if [ $i -gt 150 ] || ! kill -0 $daemon 2>/dev/null; then
		wait $daemon
		exit 1
	fi
	sleep 0.1
done

echo "== leak:   fdchurn opens 50 eventfds every 150 ms and never closes them (6 s)"
"$H/fdchurn" 50 40 --leak >/dev/null &
leak=$!
echo "== thrash: refault re-reads a 16 MiB file 5 times, dropping its pages before each pass"
"$H/refault" "$B/run-refault.dat" 16384 5 >/dev/null
echo "== false sharing: pingpong bounces 64-byte messages between CPUs 0 and 1 (3 s)"
"$H/pingpong" 3 0 1 >/dev/null
wait $leak
echo "== live: cachescope clusters"
"$B/cachescope" --socket "$sock" clusters
wait $daemon
rm -f "$B/run-refault.dat"
echo "== $(($(wc -l < "$B/run.csv") - 1)) rows in $B/run.csv"
