#!/bin/sh
# Install the Debian packages cachescope needs, when some are missing.
#
#   tools/deps.sh [build] [test]
#
# build (make deps, make run, the default): what building the programs
# and running them need -- the compilers (g++ is also nvcc's host
# compiler), libbpf, bpftool (the skeleton), libelf, zlib, libcap,
# systemtap-sdt-dev (kvref's USDT probes), libmicrohttpd (--metrics-addr)
# json-c (the JSON answers of the daemon and the CLI), libyaml and
# libcrypt (--web-config: its YAML, its bcrypt hashes), libdw (elfutils:
# unwinding and naming the allocation stacks of leaks).
# test (make test): what only the tests need -- cmocka; the software the
# label tests run as traffic (stress-ng, nginx-light, wrk); curl and
# prometheus (promtool and a server), prometheus-alertmanager and openssl
# (a certificate) for the metrics and alerting tests; clickhouse-server
# and clickhouse-client for the fleet store's test; jq and
# util-linux (setpriv) for the CLI tests; chromium, libxml2-utils
# (xmllint) and python3-pil for the test of cachescope plot's SVG;
# systemd (systemd-analyze), mandoc, groff-base and python3 for the
# install test; python3.11-dev (CPython 3.11's own headers, for the test
# of the layout the leak stacks read of a Python process).  The benchmarks' peers (bpftrace, python3-sklearn) are
# installed by neither: bench/README.md says so.
#
# As root: apt-get update once, then apt-get install -y the missing ones.
# Not root: one line saying what to install, exit 1.
set -eu

BUILD="make gcc g++ clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libcap-dev
systemtap-sdt-dev pkg-config libc6-dev libmicrohttpd-dev libjson-c-dev libyaml-dev
libcrypt-dev libdw-dev"
TEST="libcmocka-dev stress-ng nginx-light wrk curl openssl prometheus prometheus-alertmanager
clickhouse-server clickhouse-client jq util-linux chromium libxml2-utils python3-pil systemd mandoc
groff-base python3 python3.11-dev"

[ $# -gt 0 ] || set -- build
PKGS="" how="sudo make deps"
for set in "$@"; do
	case "$set" in
	build) PKGS="$PKGS $BUILD" ;;
	test) PKGS="$PKGS $TEST" how="sudo make test" ;;
	*) echo "cachescope: deps.sh: unknown set '$set': expected build or test" >&2; exit 2 ;;
	esac
done

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "cachescope: missing packages:$missing (run '$how' or: sudo apt-get install$missing)" >&2
	exit 1
fi
echo "cachescope: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
