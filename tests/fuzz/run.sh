#!/bin/sh
# Run each libFuzzer harness for a bounded time on a scratch copy of its
# seed corpus (tests/fuzz/corpus/<name>/ stays as committed), one line per
# harness, and exit non-zero when any crashed, leaked, timed out or ran out
# of memory.  Called by 'make fuzz':
#
#   tests/fuzz/run.sh FUZZ_OUT SECONDS NAME...
#
# A harness's log is FUZZ_OUT/<name>.log; a crashing input is kept as
# FUZZ_OUT/<name>/crash-* (or leak-, timeout-, oom-) to replay with
#   FUZZ_OUT/fuzz_<name> FUZZ_OUT/<name>/crash-...
set -u
cd "$(dirname "$0")/../.." || exit 1
[ $# -ge 2 ] || { echo "usage: tests/fuzz/run.sh FUZZ_OUT SECONDS NAME..." >&2; exit 2; }
out=$1 secs=$2
shift 2

failed=0
for name in "$@"; do
	bin=$out/fuzz_$name
	work=$out/$name
	log=$out/$name.log
	if [ ! -x "$bin" ]; then
		echo "fuzz_$name: missing $bin (run make fuzz-bins)"
		failed=$((failed + 1))
		continue
	fi
	rm -rf "$work"
	mkdir -p "$work/corpus"
	[ ! -d "tests/fuzz/corpus/$name" ] || cp -R "tests/fuzz/corpus/$name/." "$work/corpus/"
	# stdout of the code under test goes nowhere; stderr has libFuzzer's
	# lines, the sanitizers' reports and a harness's failed invariant
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -close_fd_mask=1 \
		-print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
	units=$(ls "$work/corpus" | wc -l)
	art=$(ls "$work" | grep -v '^corpus$' | head -1)
	if [ "$rc" -eq 0 ] && [ -z "$art" ]; then
		echo "fuzz_$name: ok, ${execs:-?} execs in ${secs} s, coverage ${cov:-?}, corpus $units"
	else
		echo "fuzz_$name: FAILED (exit $rc) after ${execs:-?} execs: ${art:+$work/$art, }see $log"
		failed=$((failed + 1))
	fi
done
echo "fuzz: $(($# - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
