#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# build-mhd.sh DIR - DIR/libmicrohttpd.a for the static guest binaries:
# Debian's libmicrohttpd.a is built with HTTPS, and its gnutls needs
# libp11-kit and libunistring, which ship no .a. The source of the very
# version whose header the host has (libmicrohttpd-dev) is fetched with
# `apt-get source` (private APT_CONFIG, apt-private.sh) and built static
# without TLS (memacct serves plain HTTP: docs/daemon.md), with its
# poll/epoll and thread-pool code, as Debian configures it otherwise (about
# 30 s). Kept once built.
# A second argument, a GNU triplet (aarch64-linux-gnu), cross-builds it
# with that triplet's gcc (make vmtest-arm64).
set -euo pipefail
mkdir -p "$1"; dir=$(cd "$1" && pwd)
cross=()
[ -n "${2:-}" ] && cross=(--host="$2" CC="$2-gcc" AR="$2-ar" RANLIB="$2-ranlib")
[ -s "$dir/libmicrohttpd.a" ] && exit 0
. "$(dirname "$0")/apt-private.sh"
ver=$(dpkg-query -W -f '${source:Version}' libmicrohttpd-dev)
src=$dir/mhd-src
rm -rf "$src"; mkdir -p "$src"
apt_private_suite "$dir/apt-src-mhd" deb-src  # its own: build-smartcols.sh may run beside (make -j2)
apt-get -qq update || echo "build-mhd: apt-get update reported errors (continuing)" >&2
# the Debian source with its patches applied (dpkg-source -x): they touch
# src/ only, not configure
(cd "$src" && apt-get -qq source "libmicrohttpd=$ver" > source.log 2>&1) ||
	{ tail -20 "$src/source.log" >&2; exit 1; }
cd "$src"/libmicrohttpd-*/
./configure -q "${cross[@]}" --disable-https --disable-shared --enable-static --disable-doc \
	--disable-examples --disable-curl --disable-nls --without-gnutls \
	--enable-epoll --enable-poll > configure.log 2>&1 ||
	{ tail -20 configure.log >&2; exit 1; }
grep -q '^#define HTTPS_SUPPORT 1' MHD_config.h &&
	{ echo "build-mhd: configure kept HTTPS" >&2; exit 1; }
make -s -C src/microhttpd libmicrohttpd.la > make.log 2>&1 || { tail -20 make.log >&2; exit 1; }
cp src/microhttpd/.libs/libmicrohttpd.a "$dir/libmicrohttpd.a.tmp"
mv "$dir/libmicrohttpd.a.tmp" "$dir/libmicrohttpd.a"
rm -rf "$src"
echo "build-mhd: $dir/libmicrohttpd.a from libmicrohttpd $ver, without HTTPS"
