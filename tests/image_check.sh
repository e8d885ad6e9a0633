#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# image_check.sh OCI_LAYOUT:TAG - `make image-check`: the image `make image`
# built, unpacked by umoci into a temporary bundle, and its own binary run
# from that rootfs the way docs/deploy/daemonset.yaml runs it: the host's
# /proc and /sys (cgroupfs, bpffs, tracefs, BTF) mounted in, `memacct
# daemon` on a loopback port with a pin path of its own. /healthz must say
# ok and /metrics carry the image's memacct_build_info and the root cgroup's
# series; then the daemon stops and the image's binary detaches its kernel
# side. Needs root; leaves no mount, pin or process behind.
set -eu
ref=$1
fail() { echo "image-check: FAIL: $*" >&2; [ -f "$dir/log" ] && cat "$dir/log" >&2; exit 1; }
dir=$(mktemp -d /tmp/memacct-image-XXXXXX)
pin=/sys/fs/bpf/memacct-image-$$
root=$dir/bundle/rootfs
dpid=
cleanup() {
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	[ -x "$root/usr/sbin/memacct" ] && [ -d "$root/sys/fs" ] &&
		chroot "$root" /usr/sbin/memacct detach --pin-path "$pin" >/dev/null 2>&1
	for m in proc sys dev; do
		mountpoint -q "$root/$m" 2>/dev/null && umount -R -l "$root/$m"
	done
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

umoci unpack --image "$ref" "$dir/bundle" >/dev/null || fail "umoci unpack $ref"
[ -x "$root/usr/sbin/memacct" ] || fail "no /usr/sbin/memacct in the image"
[ ! -e "$root/bin/sh" ] && [ ! -e "$root/usr/bin/apt-get" ] ||
	fail "the image carries a shell or a package manager"
version=$(sed -n 's/^#define MEMACCT_VERSION "\(.*\)"/\1/p' "$(dirname "$0")/../user/util.h")
config=$(cat "$dir/bundle/config.json")
echo "$config" | grep -q '"/usr/sbin/memacct"' || fail "entrypoint is not /usr/sbin/memacct"

libs=$(find "$root" -xdev -name '*.so*' -type f | wc -l)
size=$(du -skx "$root" | cut -f1)
for m in proc sys dev; do
	mkdir -p "$root/$m"
	mount --rbind "/$m" "$root/$m"
	mount --make-rslave "$root/$m"
done
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
chroot "$root" /usr/sbin/memacct daemon --listen "127.0.0.1:$port" --interval 1s \
	--pin-path "$pin" >"$dir/log" 2>&1 &
dpid=$!
ok=
for _ in $(seq 100); do
	if [ "$(curl -s "http://127.0.0.1:$port/healthz" 2>/dev/null)" = ok ]; then
		ok=1
		break
	fi
	kill -0 "$dpid" 2>/dev/null || fail "the image's daemon exited"
	sleep 0.2
done
[ -n "$ok" ] || fail "/healthz of the image's daemon never said ok"
metrics=$(curl -s "http://127.0.0.1:$port/metrics")
echo "$metrics" | grep -q "^memacct_build_info{version=\"$version\"" ||
	fail "no memacct_build_info of version $version"
echo "$metrics" | grep -q '^memacct_rss_bytes{cgroup="/"} [1-9]' || fail "no root cgroup RSS"
echo "$metrics" | grep -q '^memacct_cow_copied_bytes_total{cgroup="/"} ' || fail "no CoW counter"
kill -TERM "$dpid"
wait "$dpid" || fail "the image's daemon exited $? on SIGTERM"
dpid=
chroot "$root" /usr/sbin/memacct detach --pin-path "$pin" >/dev/null 2>&1 ||
	fail "memacct detach from the image"
[ ! -e "$pin" ] || fail "$pin left behind"
echo "image-check: ok ($ref: $size KiB unpacked, $libs shared libraries, no shell; its daemon served /metrics from the image's rootfs and detached)"
