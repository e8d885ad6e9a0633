#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# tests/gpu/bundle.sh OUTPUT: lay out OUTPUT/gpu, memacct, make bench's programs
# and bpftool with every shared library they load, the C library and its
# loader included, for a host that has none of ours (the `device` GPU machine:
# no package registry, another distribution's libc). Each executable becomes
# a shell wrapper that runs the real ELF file through the bundled loader:
#   exec lib/ld-linux-x86-64.so.2 --library-path lib real/NAME "$@"
# so nothing of the host's userspace but /bin/sh is used. The layout is the
# one tests/bench.sh expects (OUTPUT/gpu/memacct, OUTPUT/gpu/bench/*), plus
# OUTPUT/gpu/sbin/bpftool for PATH. Carried to the device with
# `carry: [".output/gpu"]` (docs/overhead.md "16-CPU reference host").
# Exit 0, or 1 when a file is missing (run `make all` first).
set -eu
OUT=${1:?usage: bundle.sh OUTPUT}
G=$OUT/gpu
rm -rf "$G"
mkdir -p "$G/lib" "$G/real" "$G/bench" "$G/sbin"

# wrap SRC DEST: DEST is a wrapper running SRC's copy through the bundle
wrap() {
	name=$(basename "$2")
	cp "$1" "$G/real/$name"
	ldd "$1" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		while read -r lib; do cp -L "$lib" "$G/lib/"; done
	# the loader depth from DEST to the bundle's root
	up=$(dirname "$2" | sed "s|^$G||; s|/[^/]*|../|g")
	cat >"$2" <<EOF
#!/bin/sh
D=\$(dirname "\$0")/$up
exec "\$D/lib/ld-linux-x86-64.so.2" --library-path "\$D/lib" "\$D/real/$name" "\$@"
EOF
	chmod +x "$2"
}

[ -x "$OUT/memacct" ] || { echo "bundle: $OUT/memacct missing (make all)" >&2; exit 1; }
wrap "$OUT/memacct" "$G/memacct"
for f in fault cow switch syscall fork loader spawn empty_attach toggle; do
	[ -x "$OUT/bench/$f" ] || { echo "bundle: $OUT/bench/$f missing (make all)" >&2; exit 1; }
	wrap "$OUT/bench/$f" "$G/bench/$f"
done
cp "$OUT/bench/empty.bpf.o" "$OUT/bench/empty_sys.bpf.o" "$G/bench/"
BPFTOOL=$(command -v bpftool || echo /usr/sbin/bpftool)
wrap "$BPFTOOL" "$G/sbin/bpftool"
echo "bundle: $G, $(du -sh "$G" | cut -f1)"
