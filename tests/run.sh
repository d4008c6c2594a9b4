#!/bin/sh
# Run the test binaries of one kind (unit, integration or all), show each
# runner's own result lines, and end with one total line.  Exits non-zero
# when any test failed or a runner died without a summary.
#
# CS_BUILD: the build folder (default build).  CS_SAN_BUILD: a second build
# folder whose unit tests were built with sanitizers (make test sets it to
# build-asan); its unit tests run after the others, with CS_BUILD pointing
# there, and count in the same total line.
set -u
cd "$(dirname "$0")/.." || exit 1
B=${CS_BUILD:-build}
S=${CS_SAN_BUILD:-}

unit_of() {
	# the Makefile's UNIT_TESTS (exported as CS_UNITS), else the same by hand
	names=${CS_UNITS:-"args csv event window htab counters kstate dbscan features classify analysis kvref sample strutil control privs metrics httpd webconfig csvread offline report rows cli status paths cgroup ptree rowcsv summary spawn tpproto keeper workload anomaly psi change"}
	u=""
	for n in $names kvref_kernels; do u="$u $1/tests/test_$n"; done
	# the CUPTI tests are built where the CUDA toolkit is
	[ ! -e /usr/local/cuda/include/cupti.h ] || u="$u $1/tests/test_cupti"
	echo "$u"
}
unit=$(unit_of "$B")
integration="$B/tests/test_integration $B/tests/test_labels $B/tests/test_hardening $B/tests/test_adversary $B/tests/test_prometheus $B/tests/test_fleet $B/tests/test_plot $B/tests/test_cli_live $B/tests/test_install $B/tests/test_scope"
case "${1:-all}" in
unit) bins=$unit ;;
integration) bins=$integration ;;
all) bins="$unit $integration" ;;
*) echo "usage: tests/run.sh [unit|integration|all]" >&2; exit 2 ;;
esac
[ -z "$S" ] || [ "${1:-all}" = integration ] || bins="$bins $(unit_of "$S")"

# a sanitizer report ends the test binary with a non-zero status
# (verify_asan_link_order=0: test_cupti LD_PRELOADs the sanitized library)
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:verify_asan_link_order=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

passed=0 failed=0 skipped=0
for t in $bins; do
	if [ ! -x "$t" ]; then
		echo "$t: missing (run make)"
		failed=$((failed + 1))
		continue
	fi
	tb=${t%/tests/*}
	label=$(basename "$t")
	[ "$tb" = "$B" ] || label="$label ($tb)"
	echo "== $label"
	t0=$(date +%s.%N)
	out=$(CS_BUILD="$tb" "$t" 2>&1)
	rc=$?
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
	printf '%s\n' "$out" | grep -v -e '^\[ RUN' -e '^\[       OK'
	p=$(printf '%s\n' "$out" | grep -o '\[  PASSED  \] [0-9]*' | grep -o '[0-9]*$' | tail -1)
	f=$(printf '%s\n' "$out" | grep -o '\[  FAILED  \] [0-9]* test' | grep -o '[0-9]*' | tail -1)
	s=$(printf '%s\n' "$out" | grep -o '\[  SKIPPED \] [0-9]* test' | grep -o '[0-9]*' | tail -1)
	if [ -z "$p$f$s" ]; then
		echo "$label: died without a summary (exit $rc)"
		f=1
	elif [ "$rc" -ne 0 ] && [ -z "$f" ]; then
		f=1
	fi
	echo "$label: $secs s"
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	skipped=$((skipped + ${s:-0}))
done
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
