#!/bin/sh
# Run the test binaries of one kind (unit, integration or all), show each
# runner's own result lines, and end with one total line.  Exits non-zero
# when any test failed or a runner died without a summary.
set -u
cd "$(dirname "$0")/.." || exit 1
B=${CS_BUILD:-build}
export CS_BUILD="$B"

unit="$B/tests/test_args $B/tests/test_csv $B/tests/test_event $B/tests/test_control $B/tests/test_privs $B/tests/test_window $B/tests/test_kstate $B/tests/test_dbscan $B/tests/test_features $B/tests/test_classify $B/tests/test_analysis $B/tests/test_kvref $B/tests/test_kvref_kernels $B/tests/test_sample $B/tests/test_strutil $B/tests/test_metrics $B/tests/test_httpd"
integration="$B/tests/test_integration $B/tests/test_labels $B/tests/test_hardening $B/tests/test_prometheus"
# the CUPTI tests are built where the CUDA toolkit is
[ ! -e /usr/local/cuda/include/cupti.h ] || unit="$unit $B/tests/test_cupti"
case "${1:-all}" in
unit) bins=$unit ;;
integration) bins=$integration ;;
all) bins="$unit $integration" ;;
*) echo "usage: tests/run.sh [unit|integration|all]" >&2; exit 2 ;;
esac

passed=0 failed=0 skipped=0
for t in $bins; do
	if [ ! -x "$t" ]; then
		echo "$t: missing (run make)"
		failed=$((failed + 1))
		continue
	fi
	echo "== $(basename "$t")"
	out=$("$t" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -v -e '^\[ RUN' -e '^\[       OK'
	p=$(printf '%s\n' "$out" | grep -o '\[  PASSED  \] [0-9]*' | grep -o '[0-9]*$' | tail -1)
	f=$(printf '%s\n' "$out" | grep -o '\[  FAILED  \] [0-9]* test' | grep -o '[0-9]*' | tail -1)
	s=$(printf '%s\n' "$out" | grep -o '\[  SKIPPED \] [0-9]* test' | grep -o '[0-9]*' | tail -1)
	if [ -z "$p$f$s" ]; then
		echo "$(basename "$t"): died without a summary (exit $rc)"
		f=1
	elif [ "$rc" -ne 0 ] && [ -z "$f" ]; then
		f=1
	fi
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	skipped=$((skipped + ${s:-0}))
done
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
