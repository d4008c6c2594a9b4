#!/bin/sh
# make run: trace the whole system for 10 seconds while generating file and
# fd activity, show the live view once, then the busiest keys and the
# summary.  The CSV of the run is left in build/run.csv.
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}

if [ "$(id -u)" != 0 ]; then
	echo "cachescope: make run loads BPF programs and needs root (sudo make run)" >&2
	exit 1
fi

sock=$B/run.sock
"$B/cachescoped" --duration 10 --csv "$B/run.csv" --socket "$sock" --top 15 &
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

echo "== tracing for 10 s: churning 20000 eventfds, re-reading a 16 MiB file 5 times after dropping it"
"$B/tests/helpers/fdchurn" 2000 10 >/dev/null
"$B/tests/helpers/refault" "$B/run-refault.dat" 16384 5 >/dev/null
echo "== live: cachescope top 8 (last closed window)"
"$B/cachescope" --socket "$sock" top 8
wait $daemon
rm -f "$B/run-refault.dat"
echo "== $(($(wc -l < "$B/run.csv") - 1)) rows in $B/run.csv"
