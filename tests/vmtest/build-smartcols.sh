#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# build-smartcols.sh DIR - DIR/libsmartcols.a for the static guest binaries:
# Debian ships libsmartcols-dev without a .a, so the util-linux source of
# the very version whose header the host has (libsmartcols-dev) is fetched
# with `apt-get source` (private APT_CONFIG, apt-private.sh) and only
# libsmartcols is configured and built, static (about 20 s). Kept once built.
# A second argument, a GNU triplet (aarch64-linux-gnu), cross-builds it
# with that triplet's gcc (make vmtest-arm64).
set -euo pipefail
mkdir -p "$1"; dir=$(cd "$1" && pwd)
cross=()
[ -n "${2:-}" ] && cross=(--host="$2" CC="$2-gcc" AR="$2-ar" RANLIB="$2-ranlib")
[ -s "$dir/libsmartcols.a" ] && exit 0
. "$(dirname "$0")/apt-private.sh"
ver=$(dpkg-query -W -f '${source:Version}' libsmartcols-dev)
src=$dir/smartcols-src
rm -rf "$src"; mkdir -p "$src"
apt_private_suite "$dir/apt-src-scols" deb-src  # its own: build-mhd.sh may run beside (make -j2)
apt-get -qq update || echo "build-smartcols: apt-get update reported errors (continuing)" >&2
# the upstream tarball: no Debian patch of 2.38.1 touches libsmartcols/,
# and one patches configure.ac (make would then want automake)
(cd "$src" && apt-get -qq source --download-only "util-linux=$ver")
tar -xf "$src"/util-linux_*.orig.tar.* -C "$src"
cd "$src"/util-linux-*/
./configure -q "${cross[@]}" --disable-all-programs --enable-libsmartcols --disable-shared --enable-static \
	--disable-nls --without-python --without-systemd --without-udev --disable-asciidoc \
	--disable-poman --disable-bash-completion > configure.log 2>&1 ||
	{ tail -20 configure.log >&2; exit 1; }
make -s libsmartcols.la > make.log 2>&1 || { tail -20 make.log >&2; exit 1; }
cp .libs/libsmartcols.a "$dir/libsmartcols.a.tmp"
mv "$dir/libsmartcols.a.tmp" "$dir/libsmartcols.a"
rm -rf "$src"
echo "build-smartcols: $dir/libsmartcols.a from util-linux $ver"
