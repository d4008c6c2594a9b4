#!/bin/sh
# cluster/dbscan.c against sklearn's DBSCAN(algorithm='kd_tree') on the same
# 5-D points: 20 Gaussian blobs and 10 % uniform noise in [0, 1]^5, at 10k,
# 100k and 1M points (bench/dbscan_sklearn.py gen).  min_pts is 10; eps is
# 0.03 at 100k (the 20 blobs come out as 20 clusters) and scales with
# n^(-1/5) so that neighbourhoods keep their size (a few hundred points).
#
# Per size: both wall times (the clustering call alone; ours is the median
# of three runs, sklearn runs once), the ratio, both peak resident sets
# (whole processes, input included; sklearn's includes the interpreter),
# and whether the results agree: equal core flags, equal noise sets, and
# the same clusters of core points up to renumbering.  Exits 1 if any size
# disagrees.
#
#   bench/dbscan.sh [SIZES...]       (make build/bench/dbscan first)
#
# DBSCAN_SKLEARN_MAX (default 1000000): above it sklearn is skipped, ours
# still timed.
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
PY=/usr/bin/python3	# Debian's, which has python3-sklearn
MIN_PTS=10
SK_MAX=${DBSCAN_SKLEARN_MAX:-1000000}
[ $# -gt 0 ] || set -- 10000 100000 1000000

[ -x "$B/bench/dbscan" ] || {
	echo "dbscan.sh: no $B/bench/dbscan; run make build/bench/dbscan" >&2
	exit 1
}
"$PY" -c 'import sklearn' 2>/dev/null || {
	echo "dbscan.sh: $PY cannot import sklearn; install python3-sklearn" >&2
	exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

field() {	# $1: name, rest: "a=1 b=2" output of a run
	n=$1
	shift
	printf '%s\n' "$*" | tr ' ' '\n' | sed -n "s/^$n=//p"
}

fail=0
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; sklearn $("$PY" -c 'import sklearn; print(sklearn.__version__)')"
for n in "$@"; do
	eps=$(awk -v n="$n" 'BEGIN { printf "%.4g", 0.038 * (n / 100000) ^ -0.2 }')
	"$PY" bench/dbscan_sklearn.py gen "$n" "$tmp/pts.f64"

	for r in 1 2 3; do
		"$B/bench/dbscan" "$tmp/pts.f64" 5 "$eps" $MIN_PTS \
			"$tmp/ours.i32" "$tmp/ours.u8" > "$tmp/run.$r"
	done
	ours=$(sort -t= -k2 -g "$tmp/run.1" "$tmp/run.2" "$tmp/run.3" | sed -n 2p)
	t_ours=$(field seconds $ours)
	rss_ours=$(field maxrss_kib $ours)
	k_ours=$(field clusters $ours)

	if [ "$n" -gt "$SK_MAX" ]; then
		printf '%d points: ours %.3f s, sklearn skipped (over DBSCAN_SKLEARN_MAX=%s)\n' \
			"$n" "$t_ours" "$SK_MAX"
		printf '  eps %s, min_pts %d: %d clusters; peak RSS ours %d MiB\n' \
			"$eps" $MIN_PTS "$k_ours" $((rss_ours / 1024))
		continue
	fi
	sk=$("$PY" bench/dbscan_sklearn.py fit "$tmp/pts.f64" "$eps" $MIN_PTS \
		"$tmp/sk.i32" "$tmp/sk.u8")
	t_sk=$(field seconds $sk)
	rss_sk=$(field maxrss_kib $sk)
	k_sk=$(field clusters $sk)
	if how=$("$PY" bench/dbscan_sklearn.py compare "$tmp/ours.i32" \
		"$tmp/ours.u8" "$tmp/sk.i32" "$tmp/sk.u8") &&
	   [ "$k_ours" = "$k_sk" ]; then
		agree=yes
	else
		agree=NO
		fail=1
	fi
	printf '%d points: ours %.3f s, sklearn %.3f s, ratio %.1fx, agree: %s\n' \
		"$n" "$t_ours" "$t_sk" \
		"$(awk -v a="$t_sk" -v b="$t_ours" 'BEGIN { print a / b }')" "$agree"
	printf '  eps %s, min_pts %d: %d clusters (sklearn %d), %s\n' \
		"$eps" $MIN_PTS "$k_ours" "$k_sk" "$how"
	printf '  peak RSS: ours %d MiB, sklearn %d MiB\n' \
		$((rss_ours / 1024)) $((rss_sk / 1024))
done
exit $fail
