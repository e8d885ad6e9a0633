#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# run.sh DIR SUITE... - the kernel matrix (docs/vmtest.md). DIR (.output/vmtest)
# holds bin/ (static memacct and workloads, built by make) and caches the
# kernels. For each suite: boot its Debian cloud kernel under qemu TCG with
# 2 NUMA nodes, run tests/vmtest/init.sh, judge with check.py. Suites listed
# in $VMTEST_OPTIONAL may fail without failing the matrix. Suites listed in
# $VMTEST_INTEGRATION also run the whole integration suite (DIR/test_integration)
# on pure cgroup v2, with $VMTEST_INTEGRATION_TIMEOUT.
# VMTEST_ARCH=arm64 (make vmtest-arm64): DIR holds arm64 binaries and
# busybox (DIR/sysroot), the kernels are Debian's arm64 ones (SUITE-16k:
# 16 KiB pages) under qemu-system-aarch64 -M virt; the same sections and
# check.py. With a suite in $VMTEST_INTEGRATION (make vmtest-full-arm64) the
# integration suite too, with arm64 builds of the tools below from Debian's
# arm64 packages (guest-tools.sh); otherwise the guest gets neither.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"; dir=$(cd "$1" && pwd); shift
suites=("$@")
optional=" ${VMTEST_OPTIONAL:-} "
arch=${VMTEST_ARCH:-x86}
timeout_s=${VMTEST_TIMEOUT:-600}
integration=" ${VMTEST_INTEGRATION-bookworm-backports} "
integration_timeout_s=${VMTEST_INTEGRATION_TIMEOUT:-3900}
start=$(date +%s)

if [ "$arch" = arm64 ]; then
	qemu=qemu-system-aarch64 busybox=$dir/sysroot/bin/busybox
	# on an arm64 host (no sysroot: built natively) the host's own
	[ -x "$busybox" ] || [ "$(uname -m)" != aarch64 ] ||
		busybox=$(command -v busybox || echo /bin/busybox)
	command -v $qemu >/dev/null || {
		echo "vmtest: $qemu missing (make deps installs qemu-system-arm)" >&2; exit 3; }
	[ -x "$busybox" ] || { echo "vmtest: no $busybox (make ARCH=arm64 makes the sysroot)" >&2; exit 3; }
	FETCH_ARCH=arm64 "$here/fetch-kernels.sh" "$dir" "${suites[@]}" ||
		echo "vmtest: fetching kernels reported errors" >&2
else
	qemu=qemu-system-x86_64 busybox=$(command -v busybox || echo /bin/busybox)
	for t in qemu-system-x86_64 busybox; do
		command -v $t >/dev/null || [ -x /bin/$t ] || {
			echo "vmtest: $t missing (make deps installs qemu-system-x86 busybox-static)" >&2; exit 3; }
	done
	"$here/fetch-kernels.sh" "$dir" "${suites[@]}" || echo "vmtest: fetching kernels reported errors" >&2
fi

# initramfs: busybox, static memacct and workloads, /init; for the
# integration suite its static binary, tests/workloads' scripts (as $TESTS)
# and the host's own tools that tests use where busybox has no equivalent
# (capsh --drop, setpriv --reuid; capsh -- runs /bin/bash; dash as the
# suite's /bin/sh, whose PATH lookup finds them: busybox ash runs its own
# applets first; the daemon tests' curl, bpftool, logrotate, coreutils'
# timeout (--preserve-status, exit 124) and sleep (copied under another
# name: busybox's is a link), and Debian's prometheus, promtool and
# prometheus-alertmanager, Go binaries that need libc only, 125 MB
# unpacked), with their
# libraries. SRC[:DEST]
cpio=$(command -v cpio || echo "busybox cpio")
root=$dir/root
rm -rf "$root"; mkdir -p "$root"/{bin,proc,sys,dev,tmp,etc,tests/workloads}
cp "$busybox" "$root/bin/busybox"
cp "$dir"/bin/* "$root/bin/"
cp "$here/init.sh" "$root/init"
# root and nobody by name, as on a host (logrotate's "create 0600 root root")
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
	> "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
ln -s busybox "$root/bin/sh"
want_integration=
for s in "${suites[@]}"; do [[ $integration == *" $s "* ]] && want_integration=1; done
# arm64: only for a run of the integration suite (make vmtest-arm64 has none)
[ -x "$dir/test_integration" ] && { [ "$arch" = x86 ] || [ -n "$want_integration" ]; } &&
	cp "$dir/test_integration" "$root/bin/"
cp "$here"/../workloads/*.py "$root/tests/workloads/"
cp "$here"/../sweep.sh "$here"/../bench_cgroups.sh "$here"/../ck_seconds.awk "$root/tests/"
# memacct.bench=1 (init.sh): the static spawn of tests/bench
[ -d "$dir/bench" ] && cp -r "$dir/bench" "$root/"
# what the daemon tests read: tests/data (kube-state-metrics series), and
# docs/deploy (dashboard, rules, logrotate) as $TESTS/../docs/deploy
cp -r "$here"/../data "$root/tests/"
mkdir -p "$root/docs" && cp -r "$here"/../../docs/deploy "$root/docs/"
# modules a kernel needs and builds as modules (fetch-kernels.sh: arm64-16k's
# nvme and ext4), by release: /init loads /modules/$(uname -r)/order
for s in "${suites[@]}"; do
	[ -s "$dir/modules-$s/order" ] && [ -s "$dir/version-$s" ] &&
		mkdir -p "$root/modules" && cp -r "$dir/modules-$s" "$root/modules/$(cat "$dir/version-$s")"
done
host_tools=1
if [ "$arch" = arm64 ]; then
	host_tools=
	[ -n "$want_integration" ] && [ "$(uname -m)" = aarch64 ] && host_tools=1
fi
[ -z "$host_tools" ] && tools=() || tools=(/usr/sbin/capsh /usr/bin/setpriv /usr/bin/bash:/bin/bash /usr/bin/dash /usr/bin/curl \
	/usr/sbin/bpftool /usr/sbin/logrotate /usr/bin/timeout /usr/bin/sleep /usr/bin/prometheus \
	/usr/bin/promtool /usr/bin/prometheus-alertmanager)
for t in "${tools[@]}"; do
	src=${t%%:*} dst=${t#*:}
	[ -x "$src" ] || { echo "vmtest: $src missing: tests that need it fail or skip in the guest" >&2; continue; }
	mkdir -p "$root$(dirname "$dst")"; cp "$src" "$root$dst"
	for l in $(ldd "$src" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$l")"; cp -L "$l" "$root$l"
	done
done
# Debian's Alertmanager will not start without its notification templates
# (its package's data, not compiled in)
am_tmpl=/usr/share/prometheus/alertmanager
if [ -n "$host_tools" ] && [ -d $am_tmpl ]; then
	mkdir -p "$root$am_tmpl"; cp $am_tmpl/*.tmpl "$root$am_tmpl/"
fi
# arm64 from an x86 host: the same tools from Debian's arm64 packages, with
# their libraries and loader (guest-tools.sh: DIR/tools, DIR/tools.list)
if [ "$arch" = arm64 ] && [ -n "$want_integration" ] && [ -z "$host_tools" ]; then
	"$here/guest-tools.sh" "$dir" arm64 ||
		echo "vmtest: guest-tools.sh failed: tests that need a tool fail or skip in the guest" >&2
	[ -s "$dir/tools.list" ] && while read -r src dst; do
		mkdir -p "$root$(dirname "$dst")"; cp -L "$dir/tools$src" "$root$dst"
	done < "$dir/tools.list"
fi
(cd "$root" && find . | $cpio -o -H newc 2>/dev/null | gzip -1) > "$dir/initramfs.gz"
# an empty disk, attached as NVMe: the guest formats it (ext2) for the page
# cache tests; sparse, rewritten by every boot
# (1 GiB: the integration suite's /var/tmp is on it, 256 MiB files)
rm -f "$dir/disk.img"; truncate -s 1G "$dir/disk.img"

# boot SUITE DISK [PART NAME]: one guest with the empty disk image DISK,
# judged by check.py; its summary line in DIR/NAME.summary (NAME: SUITE); 1
# when it failed (and is not optional). PART: the part of the integration
# suite it runs (MEMACCT_SUITES); a NAME other than SUITE runs that part
# alone, without the matrix sections
boot() {
	local s=$1 disk=$2 part=${3:-} name=${4:-$1} rc=0
	local k=$dir/vmlinuz-$s log=$dir/$name
	if [ ! -s "$k" ]; then
		res=FAIL; [[ $optional == *" $s "* ]] && res=SKIP || rc=1
		echo "$res $name: kernel not fetched" > "$log.summary"; return $rc
	fi
	# Linux >= 6.19 allocates BPF task storage with kmalloc_nolock()
	# (f484f4a3e058), which fails on a CPU without cmpxchg16b, as our -cx16
	# is: slab debugging of the kmalloc caches lets it allocate
	# (docs/vmtest.md)
	append=${VMTEST_APPEND:+ $VMTEST_APPEND}
	limit=$timeout_s ck=()
	# the fault classifier's other cases (init.sh memacct.faults=1): on
	# arm64, whose fault hook is the perf event (no error code);
	# VMTEST_FAULTS=1 adds them on x86
	if [ "${VMTEST_FAULTS:-$([ "$arch" = arm64 ] && echo 1)}" = 1 ]; then
		append="$append memacct.faults=1" ck=(--faults)
	fi
	if [[ $integration == *" $s "* ]]; then
		append="$append memacct.integration=1${part:+ memacct.suites=$part}"
		limit=$integration_timeout_s ck+=(--integration)
		[ "$name" != "$s" ] && append="$append memacct.integration_only=1" &&
			ck+=(--integration-only)
	fi
	v=$(sed -n 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/p' "$dir/version-$s" 2>/dev/null)
	if [ "$arch" = x86 ] && [ -n "$v" ] && [ $((${v% *} * 1000 + ${v#* })) -ge 6019 ]; then
		case ${VMTEST_CPU:-max,-cx16} in
		*-cx16*) append="$append slub_debug=F,kmalloc-*" ;;
		esac
	fi
	t0=$(date +%s)
	rm -f "$log.results" "$log.console"
	# arm64: -M virt has one UART (PL011, ttyAMA0: the console); the
	# results go to a PCI 16550 (8250_pci is built in), the guest's
	# ttyS0 (memacct.out=). -cpu max with QEMU's own pointer
	# authentication algorithm (pauth-impdef: the architected QARMA5 is
	# several times slower under TCG). Multi-threaded TCG: arm64 patches
	# kernel text under stop_machine(), not with x86's live int3 (below)
	if [ "$arch" = arm64 ]; then
		machine=(-M virt -accel "${VMTEST_ACCEL:-tcg}" -cpu "${VMTEST_CPU:-max,pauth-impdef=on}")
		serial=(-serial stdio -chardev "file,id=res,path=$log.results" -device pci-serial,chardev=res)
		console="console=ttyAMA0 memacct.out=ttyS0"
	else
		machine=(-accel "${VMTEST_ACCEL:-tcg,thread=single}" -cpu "${VMTEST_CPU:-max,-cx16}")
		serial=(-serial stdio -serial "file:$log.results")
		console="console=ttyS0"
	fi
	timeout "$limit" $qemu "${machine[@]}" -m 2304M \
		-smp 2,sockets=2,cores=1,threads=1 \
		-object memory-backend-ram,id=m0,size=1G -object memory-backend-ram,id=m1,size=1G \
		-object memory-backend-ram,id=m2,size=256M \
		-numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1 \
		-numa node,nodeid=2,memdev=m2 \
		-kernel "$k" -initrd "$dir/initramfs.gz" \
		-drive file="$disk",if=none,id=d0,format=raw -device nvme,serial=memacct,drive=d0 \
		-append "$console panic=-1 oops=panic loglevel=4$append" \
		-nographic -no-reboot -nodefaults "${serial[@]}" \
		> "$log.console" 2>&1 < /dev/null
	qrc=$?
	t1=$(date +%s)
	echo "== $name ($(cat "$dir/version-$s" 2>/dev/null)), $((t1 - t0)) s, qemu exit $qrc${append:+, kernel args +$append}"
	[ $qrc = 124 ] && echo "FAIL timeout: qemu killed after $limit s"
	touch "$log.results"
	if "$here/check.py" "$log.results" "$log.console" "${ck[@]}" && [ $qrc != 124 ]; then
		echo "PASS $name ($((t1 - t0)) s)" > "$log.summary"
	else
		echo "-- console tail ($log.console):"
		tail -n 30 "$log.console" | sed 's/^/   /'
		if [[ $optional == *" $s "* ]]; then
			echo "FAIL $name (optional)" > "$log.summary"
		else
			echo "FAIL $name" > "$log.summary"; rc=1
		fi
	fi
	return $rc
}

# The integration suite runs in parts, one guest each
# (VMTEST_INTEGRATION_PARTS: each part's MEMACCT_SUITES, e.g. "daemon,oom
# -daemon,-oom"; the first guest runs the matrix sections too). On x86 the
# parts' guests boot beside the others, each guest a single TCG thread, so
# that each part's minutes run on its own CPU as far as there is one
# (VMTEST_PARALLEL=0: one after another); their lines follow the others'
read -r -a parts <<< "${VMTEST_INTEGRATION_PARTS:-}"
[ ${#parts[@]} -gt 0 ] || parts=("")
fail=0 bgpids=() names=() rest=()
# the integration kernels first (their guests are the longest), then the rest
for s in "${suites[@]}"; do
	if [[ $integration != *" $s "* ]]; then
		rest+=("$s")
		continue
	fi
	for i in "${!parts[@]}"; do
		name=$s; [ "$i" -gt 0 ] && name=$s.part$((i + 1))
		names+=("$name")
		rm -f "$dir/$name.summary"
		if [ "${VMTEST_PARALLEL:-1}" = 1 ] && [ "$arch" = x86 ] &&
		   [ $((${#suites[@]} + ${#parts[@]})) -gt 2 ]; then
			rm -f "$dir/disk-$name.img"; truncate -s 1G "$dir/disk-$name.img"
			boot "$s" "$dir/disk-$name.img" "${parts[i]}" "$name" > "$dir/$name.out" 2>&1 &
			bgpids+=("$!:$name")
			echo "== $name: booted beside the others (its lines at the end)"
		else
			boot "$s" "$dir/disk.img" "${parts[i]}" "$name" || fail=1
		fi
	done
done
for s in "${rest[@]}"; do
	names+=("$s")
	rm -f "$dir/$s.summary"
	boot "$s" "$dir/disk.img" || fail=1
done
for b in "${bgpids[@]}"; do
	wait "${b%%:*}" || fail=1
	cat "$dir/${b#*:}.out"
	rm -f "$dir/disk-${b#*:}.img"
done
summary=()
for s in "${names[@]}"; do
	summary+=("$(cat "$dir/$s.summary" 2>/dev/null || echo "FAIL $s: no result")")
done
echo "== vmtest summary ($(( $(date +%s) - start )) s)"
printf '%s\n' "${summary[@]}"
exit $fail
