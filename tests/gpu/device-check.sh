#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The GPU device check: the daemon, kvref's CUDA backend and the CUPTI
# library on a machine with an NVIDIA GPU, from the bundle `make gpu-bundle`
# makes (build/cachescope-gpu.tar.gz: programs, their shared libraries,
# this script), with nothing installed there.  As root:
#
#   tar xzf cachescope-gpu.tar.gz && sudo cachescope-gpu/device-check.sh
#   sudo tests/gpu/device-check.sh              (in a checkout: build/gpu-bundle/)
#
#   --emulate      no GPU: kvref's CUDA backend and the program of known work
#                  run over the host emulation (tests/helpers/fakecuda, whose
#                  driver half hands the same CUPTI records to the library);
#                  chosen by itself where no NVIDIA device is
#   --secs N       seconds of each kvref scenario under the daemon (default
#                  30; 45 emulated, where kvref is slower)
#   CS_CHECK_OUT=DIR  keep the logs and CSVs there (default: a new /tmp dir)
#
# One line per step, "ok", "FAIL" or "skip", then a summary; in all under
# 8 minutes on a GPU (about 3).  Steps:
#   env        kernel, BTF, uprobes, glibc, driver and GPU, where libcupti
#              and libcublas are (cuBLAS is not carried: it is 0.6 GB)
#   check      kvref --backend cuda --check, as root and as nobody: every
#              logit of the GPU forward pass equals the CPU one across blocks
#              swapped out of GPU memory and back
#   known      knownwork (tests/gpu/knownwork.cu) with the library injected,
#              under cachescoped: the daemon's GPU rows of its pid hold
#              exactly its kernels, KV kernels and copied bytes
#   normal, thrash  cachescoped --workload X --workload-backend cuda: GPU
#              rows, KV kernels, the pool on the GPU, no record dropped by
#              CUPTI or the rings, the phase labelled as expected (thrash:
#              GPU KV thrash on kv-pool-gpu, the swapped blocks' bytes seen)
#   unmod      kvref --scenario thrash --no-probes beside the daemon: an
#              engine with no probes of its own; its blocks back in through
#              CUPTI's copy callbacks, GPU KV thrash on gpu-memory
#
# Exit 0 when every step passed, 1 when one failed, 2 when nothing could run.
# shellcheck disable=SC2154  # (the CSV facts are assigned by eval)
set -u
export LC_ALL=C

emulate=
secs=
while [ $# -gt 0 ]; do
	case $1 in
	--emulate) emulate=1 ;;
	--secs) secs=${2:-}; [ -n "$secs" ] || secs=none; shift ;;
	-h | --help) sed -n '4,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "device-check: unknown argument '$1' (--emulate, --secs N)" >&2; exit 2 ;;
	esac
	shift
done
if [ -n "$secs" ] && ! [[ $secs =~ ^[1-9][0-9]{0,3}$ ]]; then
	echo "device-check: --secs needs a whole number of seconds, 1..9999, not '$secs'" >&2
	exit 2
fi

die() { echo "device-check: $*" >&2; exit 2; }
fails=0
passed=0
failed=""
line() {	# line ok|FAIL|skip STEP TEXT
	printf '%-5s %-8s %s\n' "$1" "$2" "$3"
	case $1 in
	FAIL) fails=$((fails + 1))
	      failed="$failed
  $2: $3" ;;
	ok) passed=$((passed + 1)) ;;
	esac
}
check() {	# check STEP TEXT COMMAND...: ok when COMMAND succeeds
	local step=$1 text=$2
	shift 2
	if "$@"; then line ok "$step" "$text"; else line FAIL "$step" "$text"; fi
}

here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$here/cachescoped" ]; then
	src=$here
elif [ -x "$here/../../build/gpu-bundle/cachescope-gpu/cachescoped" ]; then
	src=$(cd "$here/../../build/gpu-bundle/cachescope-gpu" && pwd)
else
	die "no bundle beside me or in build/gpu-bundle/: run 'make gpu-bundle' first"
fi
[ "$(id -u)" = 0 ] || die "needs root (BPF programs and uprobes)"
if [ -z "$emulate" ] && [ ! -e /dev/nvidia0 ] && ! command -v nvidia-smi >/dev/null 2>&1; then
	emulate=1
	echo "device-check: no NVIDIA device here: running through the emulation"
fi
secs=${secs:-$([ -n "$emulate" ] && echo 45 || echo 30)}
OUTDIR=${CS_CHECK_OUT:-$(mktemp -d /tmp/cs-check-XXXXXX)}
mkdir -p "$OUTDIR" || die "cannot create $OUTDIR"
PY=$(command -v python3 || command -v /usr/bin/python3 || true)

# A copy every user can reach (kvref runs as nobody), owned by root, as the
# daemon wants of what it runs; wherever the bundle was unpacked (a 0700 home).
W=$(mktemp -d /tmp/cs-bundle-XXXXXX) || die "cannot create a folder in /tmp"
trap 'rm -rf "$W"' EXIT
cp -a "$src/." "$W/" && chown -R 0:0 "$W" && chmod 0755 "$W" || die "cannot copy the bundle to $W"
LIB=$W/libcachescope_cupti.so
if [ -n "$emulate" ]; then
	BACKEND=$W/kvref_cuda_emu.so
	KNOWN=$W/knownwork_emu
	mode="emulated (no GPU)"
else
	BACKEND=$W/kvref_cuda.so
	KNOWN=$W/knownwork
	mode="GPU"
fi
for f in "$W/cachescoped" "$W/cachescope" "$W/kvref" "$LIB" "$BACKEND" "$KNOWN"; do
	[ -e "$f" ] || die "the bundle has no $(basename "$f") (built where the CUDA toolkit was missing?)"
done
echo "device-check: $mode; bundle $(head -1 "$W/MANIFEST" 2>/dev/null); logs in $OUTDIR"

# ---- env ----
btf=no; [ -r /sys/kernel/btf/vmlinux ] && btf=yes
upr=no; [ -d /sys/bus/event_source/devices/uprobe ] && upr=yes
line "$([ $btf = yes ] && [ $upr = yes ] && echo ok || echo FAIL)" env \
	"kernel $(uname -r) $(uname -m), BTF $btf, uprobes $upr"
need=$(sed -n 's/^needs glibc \([0-9.]*\).*/\1/p' "$W/MANIFEST" 2>/dev/null)
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [ -n "$need" ] && [ -n "$have" ] &&
   [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" = "$need" ]; then
	line ok env "glibc $have (the bundle needs $need or newer)"
else
	line FAIL env "glibc ${have:-unknown}: the bundle needs ${need:-?} or newer"
	die "the bundle's programs cannot run on this glibc"
fi
# GCC's runtime: the machine's, else the bundle's (lib/fallback)
for f in libstdc++.so.6 libgcc_s.so.1; do
	sys=$(ldconfig -p 2>/dev/null | awk -v n="$f" '$1 == n && /x86-64/ {print $NF; exit}')
	if [ -n "$sys" ]; then
		line ok env "$f: $sys"
	elif [ -e "$W/lib/fallback/$f" ]; then
		ln -sf "fallback/$f" "$W/lib/$f"
		line ok env "$f: none on this machine: the bundle's ($(sed -n 's/^lib\/fallback.*needs glibc \(.*\)/needs glibc \1/p' "$W/MANIFEST"))"
	else
		line FAIL env "$f: none on this machine nor in the bundle"
	fi
done
if [ -n "$emulate" ]; then
	line skip env "driver: none (emulated); the CUDA runtime and driver are tests/helpers/fakecuda and cupti_emu.c"
else
	drv=$(nvidia-smi --query-gpu=driver_version,name,memory.total --format=csv,noheader 2>/dev/null | head -1)
	[ -n "$drv" ] || drv=$(head -1 /proc/driver/nvidia/version 2>/dev/null)
	check env "driver and GPU: ${drv:-nvidia-smi and /proc/driver/nvidia/version say nothing}" test -n "$drv"
fi
# where this machine keeps CUPTI and cuBLAS, besides what the bundle carries
find_libs() {	# find_libs NAME: the copies of NAME on this machine
	{
		ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n {print $NF}'
		for d in /usr/local/cuda/lib64 /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda-*/lib64 \
			/usr/local/cuda-*/extras/CUPTI/lib64 /usr/lib/x86_64-linux-gnu; do
			[ -e "$d/$1" ] && echo "$d/$1"
		done
		find /usr/local/lib /usr/lib /opt -xdev -path '*nvidia*' -name "$1" 2>/dev/null | head -3
	} | awk '!seen[$0]++' | head -4
}
cupti_here=$(find_libs libcupti.so.13 | tr '\n' ' ')
line ok env "libcupti: lib/libcupti.so.13 carried; on this machine: ${cupti_here:-none}"
if [ -n "$emulate" ]; then
	line skip env "libcublas: not needed (fakecuda's cuBLAS)"
else
	cublas=$(find_libs libcublas.so.13 | head -1)
	if [ -n "$cublas" ] && [ -e "$(dirname "$cublas")/libcublasLt.so.13" ]; then
		# kvref_cuda.so looks in lib/ first (its RPATH)
		ln -sf "$cublas" "$W/lib/libcublas.so.13"
		ln -sf "$(dirname "$cublas")/libcublasLt.so.13" "$W/lib/libcublasLt.so.13"
		line ok env "libcublas: $cublas"
	else
		line FAIL env "libcublas.so.13 with libcublasLt.so.13: not found on this machine"
	fi
fi

# ---- check: kvref's GPU forward pass against its CPU one ----
kvcheck() {	# kvcheck WHO: kvref --backend cuda --check, as root or nobody
	local log=$OUTDIR/check-$1.txt rc res
	if [ "$1" = root ]; then
		"$W/kvref" --backend cuda --cuda-lib "$BACKEND" --check >"$log" 2>&1
		rc=$?
	elif command -v setpriv >/dev/null; then
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$W/kvref" --backend cuda --cuda-lib "$BACKEND" --check >"$log" 2>&1
		rc=$?
	else
		su -s /bin/sh nobody -c "'$W/kvref' --backend cuda --cuda-lib '$BACKEND' --check" >"$log" 2>&1
		rc=$?
	fi
	res=$(grep -m1 '^check: cuda vs cpu: ' "$log" | sed 's/^check: //')
	[ -n "$res" ] || res="no result: $(tail -1 "$log")"
	check check "as $1: $res (exit $rc)" test "$rc" = 0
}
kvcheck root
kvcheck nobody

# ---- known: a program of known work, under the daemon ----
# facts CSV PID: the GPU rows of process PID (PID 0: the workload's rows),
# as shell assignments
facts() {
	"$PY" - "$1" "$2" <<'EOF'
import csv, sys
pid = int(sys.argv[2])
rows = [r for r in csv.DictReader(open(sys.argv[1]))
        if (r["scope"] == "workload" if pid == 0 else r["tgid"] == str(pid))]
def total(key, col):
    return sum(int(r[col] or 0) for r in rows if r["key"] == key)
print("kernels=%d kv_kernels=%d kv_kernel_ns=%d copy_in=%d copy_out=%d allocs=%d frees=%d "
      "pool_gpu_rows=%d pool_thrash=%d anomalous=%d joined=%d kv_out_pages=%d kv_in_pages=%d" % (
      total("gpu-kernels", "gpu_kernels"), total("gpu-kv-kernels", "gpu_kernels"),
      total("gpu-kv-kernels", "gpu_kernel_ns"),
      total("gpu-memory", "gpu_copy_in_bytes"), total("gpu-memory", "gpu_copy_out_bytes"),
      total("gpu-memory", "allocs"), total("gpu-memory", "frees"),
      sum(1 for r in rows if r["key"] == "kv-pool-gpu"),
      sum(1 for r in rows if r["key"] == "kv-pool-gpu" and r["label"] == "thrash"),
      sum(1 for r in rows if r["label"] not in ("", "normal")),
      sum(1 for r in rows if r["domain"] != "gpu" and int(r["tgid_gpu_kernel_ns"] or 0) > 0),
      total("kv-pool-gpu", "page_dels"), total("kv-pool-gpu", "refault_pages")))
EOF
}
# summary FILE FIELD: a number from the daemon's summary lines
summary() { grep -oE "(^| )$2=[0-9]+" "$1" | head -1 | cut -d= -f2; }

known() {
	local sock=$W/known.sock csv=$OUTDIR/known.csv out=$OUTDIR/known.out dpid rc
	local k kv in outb al
	if [ -z "$PY" ]; then
		line FAIL known "needs python3 to read the CSV"
		return
	fi
	"$W/cachescoped" --duration 120 --csv "$csv" --socket "$sock" --top 0 --fold-ms 0 --gpu-lib "$LIB" \
		>"$out" 2>&1 &
	dpid=$!
	for _ in $(seq 150); do
		"$W/cachescope" --socket "$sock" status >/dev/null 2>&1 && break
		kill -0 $dpid 2>/dev/null || break
		sleep 0.1
	done
	if ! "$W/cachescope" --socket "$sock" status >/dev/null 2>&1; then
		line FAIL known "cachescoped did not attach: $(tail -1 "$out")"
		kill $dpid 2>/dev/null
		wait $dpid 2>/dev/null
		return
	fi
	CUDA_INJECTION64_PATH=$LIB "$KNOWN" 100 >"$OUTDIR/knownwork.txt" 2>&1
	rc=$?
	sleep 1.5		# the library's last flush, the window it lands in
	kill -INT $dpid
	wait $dpid
	local pid
	pid=$(sed -n 's/^pid \([0-9]*\)$/\1/p' "$OUTDIR/knownwork.txt")
	read -r k kv in outb al _ <<EOF_KNOWN
$(sed -n 's/^knownwork: kernels \([0-9]*\) kv_kernels \([0-9]*\) copy_in \([0-9]*\) copy_out \([0-9]*\) allocs \([0-9]*\) releases \([0-9]*\).*/\1 \2 \3 \4 \5 \6/p' "$OUTDIR/knownwork.txt")
EOF_KNOWN
	if [ "$rc" != 0 ] || [ -z "${k:-}" ] || [ -z "$pid" ]; then
		line FAIL known "knownwork failed (exit $rc): $(tail -1 "$OUTDIR/knownwork.txt")"
		return
	fi
	local f
	f=$(facts "$csv" "$pid") || { line FAIL known "cannot read $csv"; return; }
	eval "$f"
	check known "kernels: knownwork $k, the daemon $kernels" test "$kernels" = "$k"
	check known "KV kernels (paged_attention_v2_kernel): knownwork $kv, the daemon $kv_kernels" \
		test "$kv_kernels" = "$kv"
	check known "bytes host to device: knownwork $in, the daemon $copy_in" test "$copy_in" = "$in"
	check known "bytes device to host: knownwork $outb, the daemon $copy_out" test "$copy_out" = "$outb"
	# CUPTI may also record the two pinned host buffers
	check known "allocations $allocs, releases $frees (knownwork: $al device allocations, each released)" \
		test "$allocs" -ge "$al" -a "$frees" = "$allocs"
	check known "no record dropped: CUPTI $(summary "$out" cupti_dropped), rings $(summary "$out" dropped), rejected $(summary "$out" rejected)" \
		test "$(summary "$out" cupti_dropped)" = 0 -a "$(summary "$out" dropped)" = 0 -a "$(summary "$out" rejected)" = 0
}
known

# ---- normal, thrash: kvref's scenarios on the GPU under the daemon ----
scenario() {
	local sc=$1 out=$OUTDIR/$1.out csv=$OUTDIR/$1.csv rc f
	"$W/cachescoped" --workload "$sc" --workload-backend cuda --workload-cuda-lib "$BACKEND" \
		--gpu-lib "$LIB" --duration "$secs" --csv "$csv" --socket none >"$out" 2>"$OUTDIR/$sc.err"
	rc=$?
	if [ "$rc" != 0 ] || [ ! -s "$csv" ] || [ -z "$PY" ]; then
		line FAIL "$sc" "cachescoped exited $rc: $(tail -1 "$OUTDIR/$sc.err")"
		return
	fi
	f=$(facts "$csv" 0) || { line FAIL "$sc" "cannot read $csv"; return; }
	eval "$f"
	line ok "$sc" "daemon and kvref exited 0; $(grep -m1 '^kvref: cuda backend,' "$out" || echo 'kvref: no report')"
	check "$sc" "GPU kernel records: $kernels kernels, $kv_kernels KV kernels ($kv_kernel_ns ns)" \
		test "$kernels" -gt 0 -a "$kv_kernels" -gt 0 -a "$kv_kernel_ns" -gt 0
	check "$sc" "the KV pool is in GPU memory: $pool_gpu_rows kv-pool-gpu rows" test "$pool_gpu_rows" -gt 0
	check "$sc" "host rows joined with the process's GPU time: $joined" test "$joined" -gt 0
	check "$sc" "no record dropped: CUPTI $(summary "$out" cupti_dropped), rings $(summary "$out" dropped); $(grep -m1 '^gpu:' "$out")" \
		test "$(summary "$out" cupti_dropped)" = 0 -a "$(summary "$out" dropped)" = 0
	local so si
	if [ "$sc" = thrash ]; then
		read -r so si <<EOF_SWAP
$(grep -oE '^phase thrash .*swap out [0-9]+ in [0-9]+' "$out" | grep -oE 'swap out [0-9]+ in [0-9]+' | tr -cs '0-9' ' ')
EOF_SWAP
		# kvref's report comes only if it finished in time (a request
		# takes seconds emulated); its probes' count then: 18 pages a block
		if [ -z "${so:-}" ]; then
			so=$((kv_out_pages * 4096 / 73728))
			si=$((kv_in_pages * 4096 / 73728))
		fi
	fi
	# emulated, a token costs a hundred times the CPU backend's: in a short
	# run kvref may swap too few blocks back in for thrash to be there at
	# all, which its own count says; then the label is not asked for (the
	# GPU run and tests/gpu/gpumem.cu swap, emulated, are its tests).
	# Blocks back in against thrash windows, four runs here: 18: 6, 12: 2,
	# 9: 1, 3: none; a CI run in between failed the label.  Below 10 it is
	# a coin toss, not a check
	if [ "$sc" = thrash ] && [ -n "$emulate" ] && [ "${si:-0}" -lt 10 ]; then
		line skip thrash "score, label and swapped blocks: emulated kvref swapped ${si:-0} blocks back in (out ${so:-0}) in $secs s, too few for thrash to happen; run longer (--secs) to check them"
		return
	fi
	check "$sc" "$(grep -m1 '^score:' "$out" || echo 'score: none')" grep -q "^score: 1 of 1 phases" "$out"
	if [ "$sc" = thrash ]; then
		check thrash "GPU KV thrash labelled on kv-pool-gpu: $pool_thrash rows" test "$pool_thrash" -gt 0
		# every swap copies one block (the default model's: 6 layers x K,V x
		# 16 tokens x 96 floats x 4 B = 73728 B); other copies only add
		check thrash "swapped blocks seen: kvref out ${so:-?} in ${si:-?}, CUPTI $copy_out B out, $copy_in B in" \
			test "${so:-0}" -gt 0 -a "${si:-0}" -gt 0 -a "$copy_out" -ge $((${so:-1} * 73728)) \
			-a "$copy_in" -ge $((${si:-1} * 73728))
	fi
}
scenario normal
scenario thrash

# ---- unmodified: kvref's thrash with none of its probes, beside the daemon:
# what CUPTI alone sees of an engine nobody here wrote ----
unmodified() {
	local sock=$W/un.sock csv=$OUTDIR/unmodified.csv out=$OUTDIR/unmodified.out dpid rc pid f swaps
	"$W/cachescoped" --duration $((secs + 15)) --csv "$csv" --socket "$sock" --top 0 --gpu-lib "$LIB" \
		>"$out" 2>&1 &
	dpid=$!
	for _ in $(seq 150); do
		"$W/cachescope" --socket "$sock" status >/dev/null 2>&1 && break
		sleep 0.1
	done
	CUDA_INJECTION64_PATH=$LIB "$W/kvref" --backend cuda --cuda-lib "$BACKEND" --scenario thrash \
		--duration "$secs" --no-probes -q >"$OUTDIR/unmodified-kvref.txt" 2>&1 &
	pid=$!
	wait $pid
	rc=$?
	sleep 1.5
	kill -INT $dpid
	wait $dpid
	if [ "$rc" != 0 ] || [ -z "$PY" ]; then
		line FAIL unmod "kvref --no-probes exited $rc: $(tail -1 "$OUTDIR/unmodified-kvref.txt")"
		return
	fi
	f=$("$PY" - "$csv" "$pid" <<'EOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["tgid"] == sys.argv[2]]
mem = [r for r in rows if r["key"] == "gpu-memory"]
print("kv_rows=%d back=%d thrash=%d kernels=%d" % (
      sum(1 for r in rows if r["domain"] == "kv"),
      sum(int(r["refault_pages"] or 0) for r in mem),
      sum(1 for r in mem if r["label"] == "thrash"),
      sum(int(r["gpu_kernels"] or 0) for r in rows if r["key"] == "gpu-kernels")))
EOF
) || { line FAIL unmod "cannot read $csv"; return; }
	eval "$f"
	swaps=$(grep -oE 'swap out [0-9]+ in [0-9]+' "$OUTDIR/unmodified-kvref.txt" | head -1)
	check unmod "no probe of kvref's reached: $kv_rows kv rows; CUPTI: $kernels kernels" \
		test "$kv_rows" = 0 -a "$kernels" -gt 0
	if [ -n "$emulate" ] && [ "$(echo "${swaps:-}" | grep -oE 'in [0-9]+' | tr -cd '0-9')" = 0 ]; then
		line skip unmod "blocks back in through CUPTI's copy callbacks: $back; emulated kvref swapped none back in ($swaps in $secs s): nothing to see"
	else
		check unmod "blocks back in through CUPTI's copy callbacks: $back (kvref: ${swaps:-no report})" \
			test "$back" -gt 0
	fi
	if [ -n "$emulate" ]; then
		line skip unmod "GPU KV thrash on gpu-memory: $thrash rows (emulated kvref swaps about a block a second, too few to sustain the label; tests/gpu/gpumem.cu swap is the emulated test of it)"
	else
		check unmod "GPU KV thrash labelled on gpu-memory: $thrash rows" test "$thrash" -gt 0
	fi
}
unmodified

if [ -n "$emulate" ]; then
	echo "device-check: ran through the emulation: it has not run on a GPU"
fi
# what failed once more, last, where a reader that keeps only the end of
# the output (a test's message) sees it, with the tails of the step's logs
if [ "$fails" != 0 ]; then
	echo "device-check: what failed:$failed"
	for f in "$OUTDIR"/*.err "$OUTDIR"/*.out "$OUTDIR"/*.txt; do
		[ -s "$f" ] || continue
		echo "--- the end of $f:"
		tail -5 "$f" | cut -c1-300
	done
fi
echo "device-check: $passed passed, $fails failed ($mode); logs in $OUTDIR"
[ "$fails" = 0 ]
