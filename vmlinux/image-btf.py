#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# image-btf.py IMAGE OUT - the kernel's raw BTF (what /sys/kernel/btf/vmlinux
# serves) cut from an uncompressed kernel image (an arm64 Image): the .BTF
# section starts with struct btf_header (include/uapi/linux/btf.h: magic
# 0xeb9f, version 1, flags 0, hdr_len 24, type_off, type_len, str_off,
# str_len), the types then the strings. The largest consistent candidate
# wins (module BTF is not in the image). make vmlinux-arm64 dumps it with
# bpftool btf dump file OUT format c.
import struct
import sys

data = open(sys.argv[1], 'rb').read()
best = None
i = data.find(b'\x9f\xeb\x01\x00\x18\x00\x00\x00')
while i >= 0:
	type_off, type_len, str_off, str_len = struct.unpack_from('<4I', data, i + 8)
	size = 24 + str_off + str_len
	if type_off == 0 and str_off == type_len and i + size <= len(data) and \
	   (best is None or size > best[1]):
		best = (i, size)
	i = data.find(b'\x9f\xeb\x01\x00\x18\x00\x00\x00', i + 1)
if best is None:
	sys.exit('image-btf: no BTF header in ' + sys.argv[1])
open(sys.argv[2], 'wb').write(data[best[0]:best[0] + best[1]])
print('image-btf: %d bytes of BTF at offset %#x' % (best[1], best[0]))
