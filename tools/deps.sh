#!/bin/sh
# Install the Debian packages cachescope needs, when some are missing.
# As root: apt-get update once, then apt-get install -y the missing ones.
# Not root: one line saying what to install, exit 1.
# libmicrohttpd-dev: the daemon's --metrics-addr; curl and prometheus (its
# promtool and server): the metrics tests only.  chromium, libxml2-utils
# (xmllint) and python3-pil: the test of cachescope plot's SVG only.
set -eu

PKGS="make gcc g++ clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
libcmocka-dev libcap-dev systemtap-sdt-dev pkg-config libc6-dev stress-ng nginx-light wrk
libmicrohttpd-dev curl prometheus chromium libxml2-utils python3-pil"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "cachescope: missing packages:$missing (run 'sudo make deps' or: sudo apt-get install$missing)" >&2
	exit 1
fi
echo "cachescope: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
