#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# fetch-kernels.sh DIR SUITE... - download Debian cloud kernels without
# installing them: a private APT_CONFIG (own state and cache under DIR/apt)
# lists the suites, `apt-get download` fetches linux-image-<abi>-cloud-amd64
# (resolved from the linux-image-cloud-amd64 meta package; on sid the image
# may live in a linux-binary-* package) and only vmlinuz is extracted, to
# DIR/vmlinuz-SUITE. Kernels already present are kept (the cache).
set -euo pipefail
mkdir -p "$1"; dir=$(cd "$1" && pwd); shift
. "$(dirname "$0")/apt-private.sh"
mkdir -p "$dir/debs"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
apt_private "$dir/apt" < <(for s in "$@"; do
	echo "deb [arch=amd64 signed-by=$keyring] http://deb.debian.org/debian $s main"
done)

need=0
for s in "$@"; do [ -s "$dir/vmlinuz-$s" ] || need=1; done
[ $need = 1 ] || exit 0
apt-get -qq update || echo "fetch-kernels: apt-get update reported errors (continuing)" >&2

for s in "$@"; do
	[ -s "$dir/vmlinuz-$s" ] && continue
	# the meta package of this suite depends on linux-image-<abi>-cloud-amd64
	ver=$(apt-cache madison linux-image-cloud-amd64 | awk -v s="$s" '$0 ~ " "s"/main" {print $3; exit}')
	if [ -z "$ver" ]; then
		echo "fetch-kernels: $s: no linux-image-cloud-amd64" >&2
		continue
	fi
	img=$(apt-cache show "linux-image-cloud-amd64=$ver" | sed -n 's/^Depends: //p' | head -1 |
		tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep -m1 '^linux-image-.*cloud-amd64' || true)
	if [ -z "$img" ]; then
		echo "fetch-kernels: $s: cannot resolve the image package of $ver" >&2
		continue
	fi
	ivers=$(apt-cache madison "$img" | awk -v s="$s" '$0 ~ " "s"/main" {print $3; exit}')
	pkgs=("$img=$ivers")
	# sid: the kernel may be in linux-binary-<abi>-cloud-amd64
	bin=$(apt-cache show "$img=$ivers" | sed -n 's/^Depends: //p' | head -1 | tr ',' '\n' |
		sed 's/^ *//; s/ .*//' | grep -m1 '^linux-binary-' || true)
	[ -n "$bin" ] && pkgs+=("$bin")
	rm -rf "$dir/debs/$s"; mkdir -p "$dir/debs/$s"
	(cd "$dir/debs/$s" && apt-get -qq download "${pkgs[@]}") || {
		echo "fetch-kernels: $s: download of ${pkgs[*]} failed" >&2; continue; }
	for deb in "$dir/debs/$s"/*.deb; do
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir/debs/$s" --wildcards '*vmlinuz*' 2>/dev/null || true
	done
	k=$(find "$dir/debs/$s" -name 'vmlinuz*' -type f | head -1)
	if [ -z "$k" ]; then
		echo "fetch-kernels: $s: no vmlinuz in ${pkgs[*]}" >&2
		continue
	fi
	cp "$k" "$dir/vmlinuz-$s"
	case ${k##*/} in
	vmlinuz-*) echo "${k##*/vmlinuz-}" ;;
	*) basename "$(dirname "$k")" ;;
	esac > "$dir/version-$s"
	rm -rf "$dir/debs/$s"
	echo "fetch-kernels: $s: $(cat "$dir/version-$s")"
done
