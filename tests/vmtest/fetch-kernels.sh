#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# fetch-kernels.sh DIR SUITE... - download Debian cloud kernels without
# installing them: a private APT_CONFIG (own state and cache under DIR/apt)
# lists the suites, `apt-get download` fetches linux-image-<abi>-cloud-amd64
# (resolved from the linux-image-cloud-amd64 meta package; on sid the image
# may live in a linux-binary-* package) and only vmlinuz is extracted, to
# DIR/vmlinuz-SUITE. Kernels already present are kept (the cache).
# FETCH_ARCH=arm64: the same for arm64 (make vmtest-arm64): the apt
# configuration resolves arm64 packages (apt-private.sh; the host's dpkg is
# untouched), the meta package is linux-image-cloud-arm64, or
# linux-image-arm64-16k for a SUITE named SUITE-16k (16 KiB pages; trixie and
# later), and the kernel is a plain arm64 Image (qemu -kernel boots it).
set -euo pipefail
mkdir -p "$1"; dir=$(cd "$1" && pwd); shift
. "$(dirname "$0")/apt-private.sh"
mkdir -p "$dir/debs"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
arch=${FETCH_ARCH:-amd64}
apt_private "$dir/apt" "$arch" < <(for s in "$@"; do echo "${s%-16k}"; done | sort -u | while read -r s; do
	echo "deb [arch=$arch signed-by=$keyring] http://deb.debian.org/debian $s main"
done)

need=0
for s in "$@"; do [ -s "$dir/vmlinuz-$s" ] || need=1; done
[ $need = 1 ] || exit 0
apt-get -qq update || echo "fetch-kernels: apt-get update reported errors (continuing)" >&2

for s in "$@"; do
	[ -s "$dir/vmlinuz-$s" ] && continue
	# the meta package of this suite depends on linux-image-<abi>-<flavour>
	suite=${s%-16k} flavour=cloud-$arch
	[ "$suite" != "$s" ] && flavour=$arch-16k
	meta=linux-image-$flavour
	ver=$(apt-cache madison "$meta" | awk -v s="$suite" '$0 ~ " "s"/main" {print $3; exit}')
	if [ -z "$ver" ]; then
		echo "fetch-kernels: $s: no $meta" >&2
		continue
	fi
	img=$(apt-cache show "$meta=$ver" | sed -n 's/^Depends: //p' | head -1 |
		tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep -m1 "^linux-image-.*$flavour" || true)
	if [ -z "$img" ]; then
		echo "fetch-kernels: $s: cannot resolve the image package of $ver" >&2
		continue
	fi
	ivers=$(apt-cache madison "$img" | awk -v s="$suite" '$0 ~ " "s"/main" {print $3; exit}')
	pkgs=("$img=$ivers")
	# sid: the kernel may be in linux-binary-<abi>-<flavour>
	bin=$(apt-cache show "$img=$ivers" | sed -n 's/^Depends: //p' | head -1 | tr ',' '\n' |
		sed 's/^ *//; s/ .*//' | grep -m1 '^linux-binary-' || true)
	[ -n "$bin" ] && pkgs+=("$bin")
	rm -rf "$dir/debs/$s"; mkdir -p "$dir/debs/$s"
	(cd "$dir/debs/$s" && apt-get -qq download "${pkgs[@]}") || {
		echo "fetch-kernels: $s: download of ${pkgs[*]} failed" >&2; continue; }
	for deb in "$dir/debs/$s"/*.deb; do
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir/debs/$s" --wildcards '*vmlinuz*' \
			'./boot/config-*' 2>/dev/null || true
	done
	k=$(find "$dir/debs/$s" -name 'vmlinuz*' -type f | head -1)
	if [ -z "$k" ]; then
		echo "fetch-kernels: $s: no vmlinuz in ${pkgs[*]}" >&2
		continue
	fi
	cp "$k" "$dir/vmlinuz-$s"
	# the kernel's configuration, when the package has it (what is built in)
	c=$(find "$dir/debs/$s" -name 'config-*' -type f | head -1)
	[ -n "$c" ] && cp "$c" "$dir/config-$s"
	# what the guest needs and this kernel builds as modules (arm64-16k:
	# nvme, ext4 and the crc32c it asks the crypto API for; make
	# vmtest-cluster: FETCH_MODULES=virtio_net, its network card), with the modules they depend on (modinfo depends=;
	# the package has no modules.dep, depmod makes it on install),
	# decompressed, in load order (DIR/modules-SUITE/order; /init insmods)
	rm -rf "$dir/modules-$s"
	for deb in "$dir/debs/$s"/*.deb; do
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir/debs/$s" --wildcards \
			'*/kernel/drivers/nvme/*' '*/kernel/fs/*' '*/kernel/lib/*' \
			'*/kernel/crypto/*' '*/kernel/drivers/net/*' '*/kernel/net/core/*' \
			'*/kernel/drivers/virtio/*' 2>/dev/null || true
	done
	mkdir -p "$dir/modules-$s"
	python3 - "$dir/debs/$s" "$dir/modules-$s" ${FETCH_MODULES:-nvme crc32c_generic ext4} <<'PY'
import lzma, os, re, sys
root, out, want = sys.argv[1], sys.argv[2], sys.argv[3:]
path = {}
for d, _, files in os.walk(root):
	for f in files:
		if '.ko' in f:
			path[f.split('.ko')[0].replace('-', '_')] = os.path.join(d, f)
def data(m):
	b = open(path[m], 'rb').read()
	return lzma.decompress(b) if path[m].endswith('.xz') else b
order = []
def add(m):
	if m in order:
		return
	d = re.search(rb'\0depends=([^\0]*)\0', data(m))
	for x in (d.group(1).decode().split(',') if d and d.group(1) else []):
		add(x.replace('-', '_'))
	order.append(m)
for w in want:
	if w.replace('-', '_') in path:
		add(w.replace('-', '_'))
with open(os.path.join(out, 'order'), 'w') as f:
	for m in order:
		open(os.path.join(out, m + '.ko'), 'wb').write(data(m))
		f.write(m + '.ko\n')
PY
	[ -s "$dir/modules-$s/order" ] || rm -rf "$dir/modules-$s"
	case ${k##*/} in
	vmlinuz-*) echo "${k##*/vmlinuz-}" ;;
	*) basename "$(dirname "$k")" ;;
	esac > "$dir/version-$s"
	rm -rf "$dir/debs/$s"
	echo "fetch-kernels: $s: $(cat "$dir/version-$s")"
done
