#!/bin/sh
# What the GPU stream costs, through the emulation (no GPU): build/bench/
# gpu_rate hands the CUPTI library real kernel and copy records at 10^5
# and 10^6 records/s for SECONDS, ending a round every 10 ms as a CUPTI
# buffer's walk does, in three set-ups, one after another:
#   alone    no daemon: nobody listens to the library's probes
#   batch    cachescoped (default --gpu-probes batch): one probe per round,
#            the records folded into 1 ms bins
#   records  cachescoped --gpu-probes records: one probe per record, the
#            design before batches
# For each: the traced process's CPU time in the library per record, the
# rounds it could not finish in their 10 ms, and the daemon's side: the GPU
# records it got, ring drops, and its CPU time over the run (all of it:
# the host tracing too).
#
#   sudo bench/gpu_stream.sh [SECONDS] [ROUNDS]     (default 3 s, 3 rounds)
set -eu
cd "$(dirname "$0")/.."
B=${CS_BUILD:-build}
S=${1:-3}
R=${2:-3}
LIB=$(readlink -f "$B/libcachescope_cupti.so" 2>/dev/null || true)
[ -e "$LIB" ] && [ -x "$B/bench/gpu_rate" ] ||
	{ echo "gpu_stream.sh: needs $B/libcachescope_cupti.so and $B/bench/gpu_rate (make; the CUDA toolkit)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "gpu_stream.sh: needs root" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. bench/lib.sh

# cpu_ticks PID: user + system clock ticks of a process so far
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# one MODE RATE: a run; appends "feeder_ns behind records drops daemon_ms"
one() {
	if [ "$1" = alone ]; then
		"$B/bench/gpu_rate" "$LIB" "$2" "$S" > "$tmp/feed"
		awk '{print $4, $8, 0, 0, 0}' "$tmp/feed" >> "$tmp/$1.$2"
		return
	fi
	"$B/cachescoped" --socket "$tmp/cs.sock" --top 0 --gpu-lib "$LIB" --gpu-probes "$1" \
		> "$tmp/cs.out" 2>&1 &
	pid=$!
	cs_wait "$tmp/cs.sock" $pid
	c0=$(cpu_ticks $pid)
	"$B/bench/gpu_rate" "$LIB" "$2" "$S" > "$tmp/feed"
	sleep 0.3			# the last batches through the rings
	c1=$(cpu_ticks $pid)
	kill -INT $pid
	wait $pid
	rec=$(sed -n 's/^gpu: records=\([0-9]*\) .*/\1/p' "$tmp/cs.out")
	drops=$(sed -n 's/^events: .* dropped=\([0-9]*\).*/\1/p' "$tmp/cs.out")
	hz=$(getconf CLK_TCK)
	awk -v rec="$rec" -v drops="$drops" -v t=$((c1 - c0)) -v hz="$hz" \
		'{printf "%s %s %s %s %.0f\n", $4, $8, rec, drops, t * 1000 / hz}' \
		"$tmp/feed" >> "$tmp/$1.$2"
}

for r in $(seq "$R"); do
	for rate in 100000 1000000; do
		for m in alone batch records; do
			one $m $rate
		done
	done
done

col() { awk -v c="$1" '{print $c}' "$2" | median; }
echo "gpu_stream: $S s a run, $R runs, medians; $(nproc) CPUs; emulated CUPTI records (no GPU)"
printf '%-9s %8s | %14s %8s | %10s %10s %12s\n' set-up rate "traced ns/rec" behind \
	"daemon got" "ring drops" "daemon CPU ms"
for rate in 100000 1000000; do
	for m in alone batch records; do
		f="$tmp/$m.$rate"
		printf '%-9s %8s | %14.1f %8s | %10s %10s %12s\n' $m $rate "$(col 1 "$f")" \
			"$(col 2 "$f")" "$(col 3 "$f")" "$(col 4 "$f")" "$(col 5 "$f")"
	done
	a=$(col 1 "$tmp/alone.$rate")
	b=$(col 1 "$tmp/batch.$rate")
	p=$(col 1 "$tmp/records.$rate")
	printf '  at %s/s: batch adds %.1f ns/record to the traced process, records %.1f (%.1fx batch)\n' \
		$rate "$(awk "BEGIN{print $b - $a}")" "$(awk "BEGIN{print $p - $a}")" \
		"$(awk "BEGIN{d = $b - $a; print (d > 0 ? ($p - $a) / d : 0)}")"
done
