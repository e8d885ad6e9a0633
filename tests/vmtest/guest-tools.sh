#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# guest-tools.sh DIR ARCH - the tools the integration suite calls, as ARCH
# (arm64) binaries, for run.sh's initramfs when the guest is not the host's
# architecture (VMTEST_ARCH=arm64 with VMTEST_INTEGRATION): the same tools
# run.sh copies from an x86 host (capsh, setpriv, bash, dash, curl, bpftool,
# logrotate, coreutils' timeout and sleep, prometheus, promtool,
# prometheus-alertmanager). Their
# Debian packages of the host's suite for ARCH are downloaded with the
# private APT configuration of sysroot.sh (apt-private.sh, DIR/apt-sysroot)
# and unpacked into DIR/tools with dpkg-deb -x; then the shared libraries
# they need (DT_NEEDED, read with readelf, to closure) the same way: a
# soname's package is the one that ships it on the host (the x86 tools need
# the same sonames, so the host has them), fetched for ARCH. DIR/tools.list:
# "SRC DEST" per file the guest needs, SRC in DIR/tools, DEST in the guest
# (the tools where run.sh puts the host's, the libraries and the dynamic
# loader at their own paths). Kept once made (DIR/tools/.done).
set -euo pipefail
mkdir -p "$1"; dir=$(cd "$1" && pwd); arch=$2
[ -e "$dir/tools/.done" ] && exit 0
. "$(dirname "$0")/apt-private.sh"
triplet=$(case $arch in arm64) echo aarch64-linux-gnu ;; *) echo "$arch-linux-gnu" ;; esac)
host_triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
apt_private_suite "$dir/apt-sysroot" deb "$arch"
apt-get -qq update || echo "guest-tools: apt-get update reported errors (continuing)" >&2
root=$dir/tools debs=$dir/debs-tools
rm -rf "$root" "$debs" "$dir/tools.list"; mkdir -p "$root" "$debs"
fetch() {	# fetch PKG...: download and unpack into $root
	(cd "$debs" && apt-get -qq download "$@")
	for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$root"; done
	rm -f "$debs"/*.deb
}
# NAME:DEST, DEST as run.sh has the host's (capsh -- runs /bin/bash; init.sh
# makes /usr/bin/dash the suite's /bin/sh)
tools="capsh:/usr/sbin/capsh setpriv:/usr/bin/setpriv bash:/bin/bash dash:/usr/bin/dash
	curl:/usr/bin/curl bpftool:/usr/sbin/bpftool logrotate:/usr/sbin/logrotate
	timeout:/usr/bin/timeout sleep:/usr/bin/sleep prometheus:/usr/bin/prometheus
	promtool:/usr/bin/promtool prometheus-alertmanager:/usr/bin/prometheus-alertmanager"
fetch libcap2-bin util-linux bash dash curl bpftool logrotate coreutils prometheus \
	prometheus-alertmanager

srcs=()
for t in $tools; do
	name=${t%%:*} dest=${t#*:} src=
	for d in bin sbin usr/bin usr/sbin; do
		[ -f "$root/$d/$name" ] && { src=/$d/$name; break; }
	done
	[ -n "$src" ] || { echo "guest-tools: no $name in the packages" >&2; continue; }
	echo "$src $dest" >> "$dir/tools.list"
	srcs+=("$src")
done
# Alertmanager's notification templates (Debian's: read at its start)
for f in "$root"/usr/share/prometheus/alertmanager/*.tmpl; do
	[ -f "$f" ] && echo "${f#"$root"} ${f#"$root"}" >> "$dir/tools.list"
done

# find_lib SONAME: its path in $root (empty if not there yet)
find_lib() {
	local d
	for d in lib/$triplet usr/lib/$triplet lib usr/lib; do
		[ -e "$root/$d/$1" ] && { echo "/$d/$1"; return 0; }
	done
	return 0
}

# the closure: each pass reads the files found so far; a soname not in
# $root yet is fetched by its host package, and the pass repeats
done_files=" " tried=" "
for pass in $(seq 1 20); do
	todo=("${srcs[@]}") missing=()
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}; todo=("${todo[@]:1}")
		case $done_files in *" $f "*) continue ;; esac
		done_files="$done_files$f "
		interp=$(readelf -lW "$root$f" 2>/dev/null |
			sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
		[ -n "$interp" ] && [ -e "$root$interp" ] && todo+=("$interp")
		for so in $(readelf -dW "$root$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
			l=$(find_lib "$so")
			if [ -n "$l" ]; then todo+=("$l"); else missing+=("$so"); fi
		done
	done
	[ ${#missing[@]} -eq 0 ] && break
	pkgs=()
	for so in $(printf '%s\n' "${missing[@]}" | sort -u); do
		case $tried in *" $so "*) echo "guest-tools: $so not found" >&2; continue ;; esac
		tried="$tried$so "
		# the dynamic loader comes with libc.so.6's package
		case $so in ld-linux-*) continue ;; esac
		p=$(dpkg -S "*/$host_triplet/$so" 2>/dev/null | head -1 | sed 's/[:,].*//' || true)
		if [ -n "$p" ]; then pkgs+=("$p"); else echo "guest-tools: no host package ships $so" >&2; fi
	done
	[ ${#pkgs[@]} -gt 0 ] || break
	fetch $(printf '%s\n' "${pkgs[@]}" | sort -u)
	done_files=" "
done
for f in $done_files; do
	case " ${srcs[*]} " in *" $f "*) ;; *) echo "$f $f" >> "$dir/tools.list" ;; esac
done
rm -rf "$debs"
touch "$root/.done"
echo "guest-tools: $root ($arch: $(wc -l < "$dir/tools.list") files)"
