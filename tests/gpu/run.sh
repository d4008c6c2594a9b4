#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The GPU stream, end to end, on a machine with an NVIDIA GPU (as root):
#
#   sudo tests/gpu/run.sh [SECONDS]        (default 30 s a run; < 5 min in all)
#   GPU_TEST_NO_BUILD=1: use build/ as it is (built elsewhere and copied)
#   GPU_TEST_OUT=DIR:    keep the outputs there (default a new /tmp dir)
#
#  1. builds everything, kvref_cuda.so and libcachescope_cupti.so included;
#  2. kvref --backend cuda --check: every logit of the GPU forward pass
#     against the CPU one, across blocks swapped out of GPU memory and back;
#  3. cachescoped --workload normal --workload-backend cuda, then thrash: kvref
#     runs on GPU 0 with the CUPTI library injected (CUDA_INJECTION64_PATH),
#     and the daemon must see GPU kernel records, KV kernels recognised by
#     name (kvref_kv_append, kvref_kv_paged_attention), no record dropped by
#     CUPTI or the rings, thrash labelled on kv-pool-gpu in the thrash run and
#     nothing anomalous in the normal one.
#
# Prints one "ok"/"FAIL" line per check and exits 1 if any failed, 2 if it
# could not run at all (no GPU, not root, build failed).
set -u
cd "$(dirname "$0")/../.."
SECS=${1:-30}
OUT=${GPU_TEST_OUT:-$(mktemp -d /tmp/cs-gpu-XXXXXX)}
PY=$(command -v python3 || true)
fails=0

die() { echo "tests/gpu/run.sh: $*" >&2; exit 2; }
check() {	# check NAME COMMAND...
	local name=$1
	shift
	if "$@"; then echo "ok    $name"; else echo "FAIL  $name"; fails=$((fails + 1)); fi
}

[ "$(id -u)" = 0 ] || die "needs root (BPF and uprobes)"
[ -e /dev/nvidia0 ] || command -v nvidia-smi >/dev/null || die "no NVIDIA GPU here"
[ -n "$PY" ] || die "needs python3 to read the CSV"
command -v nvidia-smi >/dev/null && nvidia-smi -L
mkdir -p "$OUT"

echo "== build"
if [ -n "${GPU_TEST_NO_BUILD:-}" ]; then
	echo "GPU_TEST_NO_BUILD set: using build/ as it is"
elif ! make -s -j"$(nproc)" all >"$OUT/build.log" 2>&1; then
	./tools/deps.sh >>"$OUT/build.log" 2>&1
	make -s -j"$(nproc)" all >>"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; die "build failed"; }
fi
for f in build/kvref_cuda.so build/libcachescope_cupti.so build/cachescoped build/kvref; do
	[ -e "$f" ] || die "$f was not built (is nvcc at ${CUDA:-/usr/local/cuda}/bin/nvcc?)"
done

echo "== kvref --backend cuda --check"
build/kvref --backend cuda --check 2>&1 | tee "$OUT/check.txt"
check "GPU logits equal CPU logits across swap-out and swap-in" test "${PIPESTATUS[0]}" = 0

# run SCENARIO: the daemon drives kvref on the GPU for SECS seconds
run() {
	echo "== cachescoped --workload $1 --workload-backend cuda --duration $SECS"
	build/cachescoped --workload "$1" --workload-backend cuda --duration "$SECS" \
		--csv "$OUT/$1.csv" --socket none >"$OUT/$1.out" 2>"$OUT/$1.err"
	echo $? >"$OUT/$1.rc"
	cat "$OUT/$1.err"
	grep -E '^(kvref|phase|score|events|gpu):' "$OUT/$1.out"
}

# facts SCENARIO: what the CSV says about the workload's rows, as shell words
facts() {
	"$PY" - "$OUT/$1.csv" <<'EOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["scope"] == "workload"]
def total(key, col):
    return sum(int(r[col] or 0) for r in rows if r["key"] == key)
def labelled(key, label):
    return sum(1 for r in rows if r["key"] == key and r["label"] == label)
odd = sum(1 for r in rows if r["label"] not in ("", "normal"))
print("kernels=%d kv_kernels=%d kv_kernel_ns=%d copy_in=%d copy_out=%d "
      "pool_gpu_rows=%d pool_thrash=%d anomalous=%d joined=%d" % (
      total("gpu-kernels", "gpu_kernels"), total("gpu-kv-kernels", "gpu_kernels"),
      total("gpu-kv-kernels", "gpu_kernel_ns"),
      total("gpu-memory", "gpu_copy_in_bytes"), total("gpu-memory", "gpu_copy_out_bytes"),
      sum(1 for r in rows if r["key"] == "kv-pool-gpu"),
      labelled("kv-pool-gpu", "thrash"), odd,
      sum(1 for r in rows if r["domain"] != "gpu" and int(r["tgid_gpu_kernel_ns"] or 0) > 0)))
EOF
}

# summary SCENARIO FIELD: a number from the daemon's summary lines
summary() { grep -oE "(^| )$2=[0-9]+" "$OUT/$1.out" | head -1 | cut -d= -f2; }

for sc in normal thrash; do
	run $sc
	f=$(facts $sc)
	echo "   $f"
	eval "$f"
	check "$sc: daemon and kvref exited 0" test "$(cat "$OUT/$sc.rc")" = 0
	check "$sc: GPU kernel records arrived" test "${kernels:-0}" -gt 0
	check "$sc: KV kernels recognised" test "${kv_kernels:-0}" -gt 0 -a "${kv_kernel_ns:-0}" -gt 0
	check "$sc: the KV pool is in GPU memory (kv-pool-gpu)" test "${pool_gpu_rows:-0}" -gt 0
	check "$sc: host rows joined with GPU time" test "${joined:-0}" -gt 0
	check "$sc: CUPTI dropped no record" test "$(summary $sc cupti_dropped)" = 0
	check "$sc: the rings dropped no record" test "$(summary $sc dropped)" = 0
	check "$sc: phase labelled as expected" grep -q "^score: 1 of 1 phases" "$OUT/$sc.out"
done
check "thrash: GPU KV thrash labelled on kv-pool-gpu" test "${pool_thrash:-0}" -gt 0
# kvref's own count of swaps against CUPTI's copy bytes: every swap is one
# block copied (the default model's block: 6 layers x K,V x 16 tokens x 96
# floats x 4 B = 73728 B); the other copies (block tables, logits) only add
read swap_out swap_in <<EOF_SWAP
$(grep -oE '^phase thrash .*swap out [0-9]+ in [0-9]+' "$OUT/thrash.out" | grep -oE 'swap out [0-9]+ in [0-9]+' | tr -cs '0-9' ' ')
EOF_SWAP
echo "   kvref: swap out ${swap_out:-?} in ${swap_in:-?}; CUPTI: ${copy_out:-0} B device-to-host, ${copy_in:-0} B host-to-device"
check "thrash: blocks swapped out of GPU memory and back in" test "${swap_out:-0}" -gt 0 -a "${swap_in:-0}" -gt 0
check "thrash: CUPTI saw at least the swapped blocks' bytes copied each way" \
	test "${copy_out:-0}" -ge $((${swap_out:-1} * 73728)) -a "${copy_in:-0}" -ge $((${swap_in:-1} * 73728))

echo "outputs in $OUT"
if [ "$fails" -gt 0 ]; then
	echo "tests/gpu/run.sh: $fails check(s) failed"
	exit 1
fi
echo "tests/gpu/run.sh: all checks passed"
