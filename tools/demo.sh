#!/bin/sh
# make run: cachescoped drives the reference workload through its four
# phases (normal, thrash, false_sharing, leak; 15 s each), traces the whole
# system with the workload's rows marked apart, and ends with the labelled
# keys, the cluster table, kvref's own report of what happened, and the
# score of each phase.  The CSV of the run is left in build/run.csv.
# BACKEND=cuda (make run BACKEND=cuda) runs kvref on GPU 0 instead, with
# the CUPTI library injected.
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}

if [ "$(id -u)" != 0 ]; then
	echo "cachescope: make run loads BPF programs and needs root (sudo make run)" >&2
	exit 1
fi
BE=${BACKEND:-cpu}
case "$BE" in
cpu | cuda) ;;
*) echo "cachescope: invalid BACKEND '$BE': expected cpu or cuda" >&2; exit 2 ;;
esac
echo "== cachescoped --workload mixed --workload-backend $BE --duration 60 --csv $B/run.csv"
echo "   (meanwhile, in another terminal here: sudo $B/cachescope --socket $B/run.sock clusters)"
"$B/cachescoped" --workload mixed --workload-backend "$BE" --duration 60 \
	--csv "$B/run.csv" --socket "$B/run.sock" --top 10 || exit
echo "== done: the rows are in $B/run.csv; cluster them again offline with"
echo "   sudo $B/cachescope cluster $B/run.csv    (the file is root's; README.md says what the tables mean)"
