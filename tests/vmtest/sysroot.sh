#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# sysroot.sh DIR ARCH - DIR/sysroot: the Debian packages of the host's suite
# for ARCH (arm64) that the static guest binaries link (libbpf, libelf, zlib,
# zstd, jansson, ncurses; libcheck and libsubunit for test_integration) and
# busybox-static, downloaded with a private
# APT_CONFIG (apt-private.sh: APT::Architecture ARCH there only; the host's
# dpkg gets no foreign architecture) and unpacked with dpkg-deb -x. The
# versions are the host's own suite's, as the x86 guest binaries link the
# host's. Kept once made (DIR/sysroot/.done).
set -euo pipefail
mkdir -p "$1"; dir=$(cd "$1" && pwd); arch=$2
[ -e "$dir/sysroot/.done" ] && exit 0
. "$(dirname "$0")/apt-private.sh"
apt_private_suite "$dir/apt-sysroot" deb "$arch"
apt-get -qq update || echo "sysroot: apt-get update reported errors (continuing)" >&2
pkgs="libbpf-dev libbpf1 libelf-dev libelf1 zlib1g-dev zlib1g libzstd-dev libzstd1
	libjansson-dev libjansson4 libncurses-dev libncursesw6 libtinfo6 check libsubunit-dev
	busybox-static"
rm -rf "$dir/debs-sysroot" "$dir/sysroot"; mkdir -p "$dir/debs-sysroot" "$dir/sysroot"
(cd "$dir/debs-sysroot" && apt-get -qq download $pkgs)
for deb in "$dir/debs-sysroot"/*.deb; do
	dpkg-deb -x "$deb" "$dir/sysroot"
done
rm -rf "$dir/debs-sysroot"
touch "$dir/sysroot/.done"
echo "sysroot: $dir/sysroot ($arch: $(echo $pkgs))"
