#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/gpu-bundle.sh DIR TARBALL (make gpu-bundle): completes the bundle
# folder DIR, whose programs make has linked with RPATH $ORIGIN/lib, with
# their shared-library closure in DIR/lib (all but glibc's own libraries,
# which the GPU machine has, and cuBLAS, 0.6 GB, which a CUDA machine has),
# tests/gpu/device-check.sh and a MANIFEST (what was built where, the glibc
# it needs, each file's size and SHA-256), then writes TARBALL (through a
# temporary file) and says its size; fails past 64 MiB, what the device
# machine takes.
set -eu
export LC_ALL=C
dir=$1
tar=$2
limit=$((64 << 20))
lib=$dir/lib

die() { echo "gpu-bundle: $*" >&2; exit 1; }
[ -x "$dir/cachescoped" ] || die "no $dir/cachescoped"
rm -rf "$lib"
mkdir -p "$lib"
cp tests/gpu/device-check.sh "$dir/device-check.sh"
chmod 0755 "$dir/device-check.sh"

# glibc's libraries and the loader stay the machine's; the driver and
# cuBLAS are the CUDA machine's own
skip='^(linux-vdso\.so|linux-gate\.so|ld-linux|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libutil\.so|libresolv\.so|libcuda\.so|libcublas\.so|libcublasLt\.so)'
elfs=$(find "$dir" -maxdepth 1 -type f \( -perm -u+x -o -name '*.so' \) ! -name '*.sh')
missing=
for f in $elfs; do
	while read -r name arrow path _; do
		[ "$arrow" = "=>" ] || continue
		echo "$name" | grep -qE "$skip" && continue
		if [ "$path" = not ]; then
			missing="$missing $name($(basename "$f"))"
			continue
		fi
		[ -e "$lib/$name" ] || cp -L "$path" "$lib/$name"
	done < <(ldd "$f" 2>/dev/null)
done
[ -z "$missing" ] || die "libraries not found here:$missing"
# the CUPTI library looks CUPTI up at start (cuda/cupti_api.h): no
# DT_NEEDED names it, so it is carried by name (CUPTI_SO, from make)
if [ -e "$dir/libcachescope_cupti.so" ]; then
	[ -e "${CUPTI_SO:-}" ] || die "no CUPTI_SO (libcupti.so.13) to carry: '${CUPTI_SO:-}'"
	cp -L "$CUPTI_SO" "$lib/$(basename "$CUPTI_SO")"
fi
# the closure of what was copied (the copies are looked up through the
# programs' RPATH, so their own needs must be here too)
for f in "$lib"/*; do
	while read -r name arrow path _; do
		[ "$arrow" = "=>" ] && [ "$path" != not ] || continue
		echo "$name" | grep -qE "$skip" && continue
		[ -e "$lib/$name" ] || cp -L "$path" "$lib/$name"
	done < <(ldd "$f" 2>/dev/null)
done
# GCC's runtime is on every machine with a C++ program (and newer there than
# Debian 12's, whose libstdc++ would ask glibc 2.36): carried in lib/fallback,
# which device-check.sh links into lib/ only where the machine has none
mkdir -p "$lib/fallback"
for f in libstdc++.so.6 libgcc_s.so.1; do
	[ -e "$lib/$f" ] && mv "$lib/$f" "$lib/fallback/$f"
done
chmod 0644 "$lib"/*.so* "$lib"/fallback/*

# the newest glibc symbol version a file asks for
glibc_of() {
	for f in "$@"; do objdump -T "$f" 2>/dev/null; done |
		grep -oE 'GLIBC_[0-9]+\.[0-9]+(\.[0-9]+)?' | sed 's/GLIBC_//' | sort -uV | tail -1
}
glibc=$(glibc_of $elfs "$lib"/*.so*)
[ -n "$glibc" ] || die "cannot read the glibc versions the programs need (objdump?)"
fallback_glibc=$(glibc_of "$lib"/fallback/*)
rev=$(git describe --always --dirty 2>/dev/null || echo unknown)
os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")
nvcc=$( (${NVCC:-/usr/local/cuda/bin/nvcc} --version 2>/dev/null || true) | sed -n 's/.*release \([0-9.]*\).*/\1/p')
{
	echo "cachescope $rev, built $(date -u +%Y-%m-%dT%H:%M:%SZ) on ${os:-unknown}, CUDA ${nvcc:-none}"
	echo "needs glibc $glibc or newer (GLIBC_$glibc), x86-64, an NVIDIA driver for CUDA 13, libcublas.so.13 and libcublasLt.so.13 (not carried)"
	echo "lib/fallback (GCC's runtime, used where the machine has none) needs glibc ${fallback_glibc:-?}"
	echo "run: tar xzf $(basename "$tar") && sudo $(basename "$dir")/device-check.sh"
	echo
	(cd "$dir" && find . -type f ! -name MANIFEST | sort | while read -r f; do
		printf '%s %10d %s\n' "$(sha256sum "$f" | cut -c1-64)" "$(stat -c %s "$f")" "${f#./}"
	done)
} >"$dir/MANIFEST"

tmp=$tar.tmp.$$
trap 'rm -f "$tmp"' EXIT
tar -C "$(dirname "$dir")" --owner=0 --group=0 -czf "$tmp" "$(basename "$dir")"
size=$(stat -c %s "$tmp")
[ "$size" -le "$limit" ] || die "$tar would be $size bytes, past the 64 MiB a device machine takes"
mv "$tmp" "$tar"
trap - EXIT
echo "gpu-bundle: $tar: $(awk -v s="$size" 'BEGIN {printf "%.1f MiB", s / 1048576}') packed, $(du -sb "$dir" | awk '{printf "%.1f MiB", $1 / 1048576}') unpacked; needs glibc $glibc"
