#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# mutants.sh - the mutation check (issue 47; make mutation-check): each
# mutant below is a deliberate one-line break of the kernel side's
# classifier or of a userspace filler; built in a copy of the tree, each must
# turn the integration suite red. A mutant the suite lets pass means a
# figure no test holds to its truth: this script fails then.
#
# The copy ($MUTANT_DIR, default a fresh /tmp directory) holds the tracked
# files as they are in the working tree and this build's .output objects
# (their times kept), so a mutant rebuilds only what its file feeds. The
# tree itself is never touched. Needs root (the integration suite's).
#
# Usage: tests/mutants.sh [NAME...]   (default: every mutant)
set -euo pipefail
cd "$(dirname "$0")/.."

# name | file | text | its replacement | the suites that must fail
# (MEMACCT_SUITES: those whose truths the break changes; a few seconds
# to a minute each)
mutants=(
	"thp_order|bpf/faults.bpf.c|pages = 1U << (order \& 31)|pages = 1U|integration"
	"file_cow_as_anon|bpf/faults.bpf.c|sl->pend.cow_file += pages;|sl->pend.cow += pages;|integration"
	"exit_fold|bpf/lifecycle.bpf.c|faults_exit(task, tid);|(void)tid;|integration"
	"flow_off_by_one_page|user/model/fill.c|d->flags \& MF_BYTES ? v \* page_size : v;|d->flags \& MF_BYTES ? (v + 1) * page_size : v;|integration"
	"pinned_vm_peak_field|user/model/fill.c|m->pinned_vm_peak = p->pin.pinned_vm_peak_pages|m->pinned_vm_peak = p->pin.locked_vm_peak_pages|integration"
)

[ "$(id -u)" = 0 ] || { echo "mutants.sh: needs root (the integration suite's)" >&2; exit 2; }
[ -x .output/memacct ] && [ -x .output/test_integration ] || {
	echo "mutants.sh: build first (make all test-bins)" >&2; exit 2; }
dir=${MUTANT_DIR:-$(mktemp -d /tmp/memacct-mutants.XXXXXX)}
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
# the tracked files, then the outputs a rebuild reuses (not the guests')
git ls-files -z | tar --null -T - -cf - | tar -xpf - -C "$dir"
mkdir -p "$dir/.output"
(cd .output && tar --exclude=./vmtest --exclude=./vmtest-arm64 --exclude=./deb \
	--exclude=./image --exclude='./*.tar' --exclude='./*.deb' -cf - .) |
	tar -xpf - -C "$dir/.output"

want=("$@")
caught=0 missed=()
for m in "${mutants[@]}"; do
	IFS='|' read -r name file from to suites <<< "$m"
	if [ ${#want[@]} -gt 0 ] && [[ " ${want[*]} " != *" $name "* ]]; then
		continue
	fi
	cp -p "$file" "$dir/$file.orig"
	sed -i "s|$from|$to|" "$dir/$file"
	if cmp -s "$file" "$dir/$file"; then
		echo "mutants.sh: $name: '$from' not found in $file (update the mutant)" >&2
		exit 2
	fi
	echo "=== mutant $name: $file: $(diff "$file" "$dir/$file" | grep '^>' | head -1)"
	t0=$(date +%s)
	make -C "$dir" -s -j2 .output/memacct .output/test_integration > "$dir/build.log" 2>&1 ||
		{ cat "$dir/build.log"; echo "mutants.sh: $name does not build" >&2; exit 2; }
	t1=$(date +%s)
	if (cd "$dir" && MEMACCT=$PWD/.output/memacct WORKLOADS=$PWD/.output/workloads \
		TESTS=$PWD/tests MEMACCT_SUITES=$suites timeout 900 .output/test_integration \
		> "$dir/$name.log" 2>&1); then
		echo "MISSED $name: the $suites suite passed with it (built in $((t1 - t0)) s)"
		missed+=("$name")
	else
		echo "caught $name: $(grep -cE ':[FE]:' "$dir/$name.log") failing tests, e.g." \
			"$(grep -m1 -E ':[FE]:' "$dir/$name.log" | cut -c1-220)" \
			"(build $((t1 - t0)) s, suite $(($(date +%s) - t1)) s)"
		caught=$((caught + 1))
	fi
	cp -p "$dir/$file.orig" "$dir/$file"
	touch "$dir/$file"	# newer than the mutant's objects: the next build redoes them
done
echo "mutation check: $caught caught, ${#missed[@]} missed${missed[*]:+: ${missed[*]}}"
[ ${#missed[@]} = 0 ]
