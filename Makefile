# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# memacct build: bpf/UNIT.bpf.c -> .output/bpf-units/UNIT.bpf.o, linked into
# .output/NAME.bpf.o -> .output/NAME.skel.h (memacct: the tracepoint
# programs, MEMACCT_UNITS; task_walk: the daemon's process walk)
# -> user/*/*.c -> .output/memacct. `make V=1` shows the commands.

# `make check SANITIZE=1`: ASan + UBSan (+ LSan) build in .output-san; any
# report of any memacct process, test binary or not, fails the run.
SANITIZE   ?=
# ARCH: the architecture built for, as the kernel names it (x86, arm64);
# default the host's. Another one cross-builds (`make ARCH=arm64` on x86:
# the static guest binaries of make vmtest-arm64 in .output-arm64/vmtest,
# with aarch64-linux-gnu-gcc and a sysroot of Debian's arm64 packages,
# tests/vmtest/sysroot.sh; docs/vmtest.md "arm64").
HOST_ARCH  := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH       ?= $(HOST_ARCH)
override ARCH := $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(ARCH)))
CROSS      := $(if $(filter $(HOST_ARCH),$(ARCH)),,1)
TRIPLET    := $(if $(CROSS),$(if $(filter arm64,$(ARCH)),aarch64-linux-gnu,$(ARCH)-linux-gnu))
OUTPUT     := .output$(if $(CROSS),-$(ARCH))$(if $(SANITIZE),-san)
CLANG      ?= clang
BPFTOOL    ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
CC         ?= cc
ifneq ($(CROSS),)
ifeq ($(origin CC),default)
CC         := $(TRIPLET)-gcc
endif
endif
PKG_CONFIG ?= pkg-config
PREFIX     ?= /usr/local
VMLINUX    := vmlinux/$(ARCH)/vmlinux.h

CFLAGS     ?= -O2 -g
ifneq ($(SANITIZE),)
SAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CFLAGS     += $(SAN_FLAGS)
SAN_LOGS   := $(CURDIR)/$(OUTPUT)/sanitizer
SAN_ENV    := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:log_path=$(SAN_LOGS)/asan \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$(SAN_LOGS)/ubsan \
	LSAN_OPTIONS=log_path=$(SAN_LOGS)/lsan:suppressions=$(CURDIR)/tests/lsan.supp MEMACCT_SANITIZE=1
endif
WARNINGS   := -Wall -Wextra -Wno-unused-parameter -Werror -Wmissing-prototypes -Wshadow -Wundef
# user/ by layer, each including only those before it (README "Layout",
# tests/layers.py): user/ (util) proc/ kernel/ model/ out/ cmd/
USER_DIRS  := user user/proc user/kernel user/model user/out user/cmd
INCLUDES   := -Iinclude $(addprefix -I,$(USER_DIRS)) -I$(OUTPUT)
# cross: libbpf, libelf, zlib, jansson, ncurses of the target from the sysroot
SYSROOT    := $(if $(CROSS),$(OUTPUT)/vmtest/sysroot)
SYSROOT_DONE := $(if $(CROSS),$(SYSROOT)/.done)
ifneq ($(CROSS),)
INCLUDES   += -isystem $(SYSROOT)/usr/include
CROSS_LDFLAGS := -L$(SYSROOT)/usr/lib/$(TRIPLET)
endif
LIBS       := $(shell $(PKG_CONFIG) --libs libbpf jansson 2>/dev/null || echo -lbpf -lelf -lz -ljansson)
CURSES_LIBS := $(shell $(PKG_CONFIG) --libs ncursesw 2>/dev/null || echo -lncursesw -ltinfo)
SCOLS_LIBS := $(shell $(PKG_CONFIG) --libs smartcols 2>/dev/null || echo -lsmartcols)
HTTP_LIBS  := $(shell $(PKG_CONFIG) --libs libmicrohttpd zlib libsystemd 2>/dev/null || \
		echo -lmicrohttpd -lz -lsystemd)
CHECK_LIBS := $(shell $(PKG_CONFIG) --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)

USER_SRCS  := $(sort $(foreach d,$(USER_DIRS),$(wildcard $(d)/*.c)))
USER_HDRS  := $(foreach d,$(USER_DIRS),$(wildcard $(d)/*.h))
USER_OBJS  := $(patsubst %.c,$(OUTPUT)/%.o,$(notdir $(USER_SRCS)))
vpath %.c $(USER_DIRS)
LIB_OBJS   := $(filter-out $(OUTPUT)/main.o,$(USER_OBJS))
UNIT_SRCS  := $(sort $(wildcard tests/unit_*.c))
INTEG_SRCS := $(sort $(wildcard tests/integration*.c))
WORKLOAD_HDRS := $(wildcard tests/workloads/*.h)
WORKLOADS  := $(patsubst tests/workloads/%.c,$(OUTPUT)/workloads/%,$(sort $(wildcard tests/workloads/*.c)))
# make bench's programs (tests/bench/): built by `make` too, so they never rot
BENCH_BINS := $(patsubst tests/bench/%.c,$(OUTPUT)/bench/%,$(filter-out %.bpf.c,$(sort $(wildcard tests/bench/*.c))))
BENCH_OBJS := $(patsubst tests/bench/%.bpf.c,$(OUTPUT)/bench/%.bpf.o,$(sort $(wildcard tests/bench/*.bpf.c)))

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.PHONY: all check unit integration bench install uninstall vmlinux clean deps vmtest man fuzz scale \
	vmtest-cluster \
	vmtest-bins test-bins vmtest-arm64 vmtest-full-arm64 vmlinux-arm64 \
	completion deb deb-check image image-check soak soak-oom bench-check alerts-check deploy-check layers-check \
	bpf-units-check mutation-check

ifeq ($(CROSS),)
all: $(OUTPUT)/memacct $(OUTPUT)/python/memacct.py $(BENCH_BINS) $(BENCH_OBJS)
else
all: vmtest-bins $(OUTPUT)/vmtest/test_integration
endif

$(OUTPUT) $(OUTPUT)/workloads:
	$(Q)mkdir -p $@

# BPF objects: CO-RE, compiled against the checked-in vmlinux.h
SKELS := $(OUTPUT)/memacct.skel.h $(OUTPUT)/task_walk.skel.h
# made by pattern rules, yet kept: sources outside user/ include the skeletons
.SECONDARY: $(SKELS) $(SKELS:.skel.h=.bpf.o)

# Each object is linked from units, one concern each (bpf/NAME.bpf.c, README
# "Layout"); a unit shares state with the others only through extern
# declarations in a header, which holds no state itself. The units that
# define shared state come first: libbpf 1.1's linker gives a variable the
# wrong offset in the BTF when a unit that declares it extern precedes the
# one that defines it (bpf-units-check fails then).
MEMACCT_UNITS   := mm_rss records pins faults dma oom numa page_cache task_stocks lifecycle
TASK_WALK_UNITS := mm_rss task_walk
BPF_UNIT_DIR    := $(OUTPUT)/bpf-units

$(BPF_UNIT_DIR)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.bpf.h) include/memacct.h $(VMLINUX)
	$(Q)mkdir -p $(@D)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-Iinclude -Ivmlinux/$(ARCH) -c $< -o $@

$(OUTPUT)/memacct.bpf.o: $(MEMACCT_UNITS:%=$(BPF_UNIT_DIR)/%.bpf.o) | $(OUTPUT)
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/task_walk.bpf.o: $(TASK_WALK_UNITS:%=$(BPF_UNIT_DIR)/%.bpf.o) | $(OUTPUT)
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(OUTPUT)/%.o: %.c $(USER_HDRS) include/memacct.h $(SKELS) | $(OUTPUT) $(SYSROOT_DONE)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARNINGS) $(INCLUDES) -c $< -o $@

# the Python mark client beside the build's binary: `memacct run` puts this
# directory on CMD's PYTHONPATH, so `import memacct` works before make install
$(OUTPUT)/python/memacct.py: user/memacct.py
	$(Q)mkdir -p $(@D) && cp $< $@

$(OUTPUT)/memacct: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBS) $(SCOLS_LIBS) $(CURSES_LIBS) $(HTTP_LIBS) -o $@

# Static binaries for qemu guests (tests/vmtest/): the guest has no libc or
# libbpf of ours. Debian's libmicrohttpd.a cannot be linked statically
# (its gnutls needs p11-kit and libunistring, which ship no .a):
# tests/vmtest/build-mhd.sh builds one without TLS from the source of the
# host's libmicrohttpd-dev. Debian ships no libsmartcols.a either:
# tests/vmtest/build-smartcols.sh builds one from the util-linux source of
# the host's libsmartcols-dev. libsystemd has no .a: its two calls are
# tests/vmtest/sd_daemon.c.
STATIC_LIBS := -lbpf -lelf -lz -ljansson -lncursesw -ltinfo -lpthread
VMTEST_DIR  := $(OUTPUT)/vmtest
SCOLS_STATIC := $(VMTEST_DIR)/libsmartcols.a
MHD_STATIC  := $(VMTEST_DIR)/libmicrohttpd.a
STATIC_WORKLOADS := $(patsubst tests/workloads/%.c,$(VMTEST_DIR)/bin/%,$(sort $(wildcard tests/workloads/*.c)))

$(VMTEST_DIR)/sd_daemon.o: tests/vmtest/sd_daemon.c
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARNINGS) -c $< -o $@

$(SCOLS_STATIC): tests/vmtest/build-smartcols.sh tests/vmtest/apt-private.sh
	$(call msg,SCOLS,$@)
	$(Q)rm -f $@ && tests/vmtest/build-smartcols.sh $(VMTEST_DIR) $(TRIPLET)

$(MHD_STATIC): tests/vmtest/build-mhd.sh tests/vmtest/apt-private.sh
	$(call msg,MHD,$@)
	$(Q)rm -f $@ && tests/vmtest/build-mhd.sh $(VMTEST_DIR) $(TRIPLET)

$(VMTEST_DIR)/sysroot/.done: tests/vmtest/sysroot.sh tests/vmtest/apt-private.sh
	$(call msg,SYSROOT,$(@D))
	$(Q)rm -f $@ && tests/vmtest/sysroot.sh $(VMTEST_DIR) $(ARCH)

$(VMTEST_DIR)/bin/memacct: $(USER_OBJS) $(VMTEST_DIR)/sd_daemon.o $(SCOLS_STATIC) $(MHD_STATIC)
	$(Q)mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -static $^ $(CROSS_LDFLAGS) $(STATIC_LIBS) -o $@

# the whole integration suite, run in the guest on pure cgroup v2
$(VMTEST_DIR)/test_integration: $(INTEG_SRCS) tests/integration.h $(LIB_OBJS) $(VMTEST_DIR)/sd_daemon.o \
	$(SCOLS_STATIC) $(MHD_STATIC) $(SKELS)
	$(Q)mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(WARNINGS) -Wno-missing-prototypes $(INCLUDES) -Itests -static \
		$(INTEG_SRCS) $(LIB_OBJS) $(VMTEST_DIR)/sd_daemon.o $(SCOLS_STATIC) $(MHD_STATIC) \
		$(CROSS_LDFLAGS) $(STATIC_LIBS) \
		-lcheck -lsubunit -lm -lrt -o $@

# tests/bench_cgroups.sh in the guest (memacct.bench=1, docs/vmtest.md)
$(VMTEST_DIR)/bench/spawn: tests/bench/spawn.c
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -Wall -Werror -static $< -o $@

$(VMTEST_DIR)/bin/%: tests/workloads/%.c $(WORKLOAD_HDRS)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) -O1 -g -Wall -Werror -D_GNU_SOURCE -static $< -o $@

# Tests: unit tests need neither root nor BPF; integration tests need root and BTF
$(OUTPUT)/test_unit: $(UNIT_SRCS) $(LIB_OBJS) tests/check_util.h $(SKELS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(WARNINGS) -Wno-missing-prototypes $(INCLUDES) -Itests \
		$(UNIT_SRCS) $(LIB_OBJS) $(LIBS) $(SCOLS_LIBS) $(CURSES_LIBS) $(HTTP_LIBS) $(CHECK_LIBS) -o $@

$(OUTPUT)/test_integration: $(INTEG_SRCS) tests/integration.h $(LIB_OBJS) $(SKELS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(WARNINGS) -Wno-missing-prototypes $(INCLUDES) -Itests \
		$(INTEG_SRCS) $(LIB_OBJS) $(LIBS) $(SCOLS_LIBS) $(CURSES_LIBS) $(HTTP_LIBS) $(CHECK_LIBS) -o $@

$(OUTPUT)/workloads/%: tests/workloads/%.c $(WORKLOAD_HDRS) | $(OUTPUT)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) -O1 -g -Wall -Werror -D_GNU_SOURCE $< -o $@

unit: $(OUTPUT)/test_unit
	$(Q)$(if $(SANITIZE),rm -rf $(SAN_LOGS) && mkdir -p $(SAN_LOGS) &&) \
		cd tests && $(SAN_ENV) ../$(OUTPUT)/test_unit
	$(Q)$(call san_verdict)

# the tests allowed to skip themselves on this machine (tests/skips-allowed:
# the CI host's); a skip not listed fails the run; INTEG_SKIPS= : no check
INTEG_SKIPS ?= $(CURDIR)/tests/skips-allowed$(if $(SANITIZE),:$(CURDIR)/tests/skips-allowed-sanitize)

# With SANITIZE, the suites whose subject is the kernel side (maps filled
# to their limits, the fault hook matrix), which add minutes of CI and no
# userspace path the other suites leave out; MEMACCT_SUITES of
# tests/integration.c ("" runs every suite)
SAN_SUITES ?= -loss,-faulthook

# each suite's seconds printed at the end (libcheck's XML log), then again
# the verdict lines (libcheck's summary and failures, test_integration's
# FAIL lines), so that the tail of a CI log names what failed
integration: $(OUTPUT)/memacct $(OUTPUT)/python/memacct.py $(OUTPUT)/test_integration $(WORKLOADS)
	$(Q)$(if $(SANITIZE),rm -rf $(SAN_LOGS) && mkdir -p $(SAN_LOGS) &&) \
		: > $(OUTPUT)/integration.log; \
		$(SAN_ENV) MEMACCT=$(CURDIR)/$(OUTPUT)/memacct WORKLOADS=$(CURDIR)/$(OUTPUT)/workloads \
		TESTS=$(CURDIR)/tests MEMACCT_SKIPS_ALLOWED="$(INTEG_SKIPS)" \
		$(if $(SANITIZE),MEMACCT_SUITES="$(SAN_SUITES)") \
		CK_XML_LOG_FILE_NAME=$(CURDIR)/$(OUTPUT)/integration.xml \
		$(OUTPUT)/test_integration > $(OUTPUT)/integration.log 2>&1 & pid=$$!; \
		trap "kill $$pid" INT TERM; \
		tail -n +1 --pid=$$pid -f $(OUTPUT)/integration.log; wait $$pid; rc=$$?; \
		awk -f tests/ck_seconds.awk $(OUTPUT)/integration.xml | sort -k3 -rn; \
		grep -E '^[0-9]+%: Checks|:[FE]:|^FAIL|^MEMACCT_' $(OUTPUT)/integration.log; exit $$rc
	$(Q)$(call san_verdict)

# with SANITIZE: fail when any process wrote a sanitizer report
# (a log of suppressed leaks only, tests/lsan.supp, has no ERROR line)
san_verdict = $(if $(SANITIZE),if grep -l 'ERROR\|runtime error' $(SAN_LOGS)/* >/dev/null 2>&1; \
	then cat $(SAN_LOGS)/*; echo "sanitizer reports in $(SAN_LOGS)"; exit 1; fi)

# user/'s layers (README "Layout"): no file includes a later layer's header,
# no include cycle between modules, no header declares another layer's function
layers-check:
	$(Q)tests/layers.py

# bpf/'s units (README "Layout"): no state in a header; each linked object's
# variables where its BTF says (the units' link order)
bpf-units-check: $(OUTPUT)/memacct.bpf.o $(OUTPUT)/task_walk.bpf.o
	$(Q)BPFTOOL=$(BPFTOOL) tests/bpf_units.py $^

# the mutation check (issue 47): one-line breaks of the classifier and the
# fillers, each built in a copy of the tree, must each turn the integration
# suite red (tests/mutants.sh lists them); ~5 min
mutation-check: $(OUTPUT)/memacct $(OUTPUT)/test_integration $(WORKLOADS)
	$(Q)tests/mutants.sh

check: layers-check bpf-units-check unit integration alerts-check deploy-check $(if $(SANITIZE),,deb-check image-check bench-check)

# the Kubernetes objects of docs/deploy/daemonset.yaml, parsed and checked
# against each other and against memacct's own option parser (no cluster:
# tests/deploy_check.py)
deploy-check: $(OUTPUT)/memacct
	$(Q)tests/deploy_check.py docs/deploy/daemonset.yaml docs/deploy/uninstall.yaml \
		$(DEB_VERSION) $(OUTPUT)/memacct

# the shipped alerting and recording rules: valid (promtool check rules) and
# each alert made to fire and not fire (tests/alerts/*.test.yml); promtool
# is in Debian's prometheus package (make deps); skipped, saying so, without it
ALERT_RULES := $(wildcard docs/deploy/*.rules.yml)
alerts-check:
	$(Q)if ! command -v promtool >/dev/null; then \
		echo "SKIP alerts-check: no promtool (Debian package prometheus: make deps)"; \
	else promtool check rules $(ALERT_RULES) && \
		for t in tests/alerts/*.test.yml; do promtool test rules $$t || exit 1; done; fi

# make bench's paired part in 3 toggled blocks: the bench must not rot (tests/bench_check.sh)
bench-check: $(OUTPUT)/memacct $(BENCH_BINS) $(BENCH_OBJS)
	$(Q)tests/bench_check.sh $(CURDIR)/$(OUTPUT)

# libFuzzer over the kernel-file parsers (tests/fuzz/fuzz_parsers.c), with
# ASan+UBSan: a crash, leak or UB report fails. FUZZ_TIME seconds (CI: 60;
# a longer run: make fuzz FUZZ_TIME=3600). Seeds: tests/data, each file
# prefixed with its parser's selector byte, and tests/fuzz/regress (inputs
# that once failed); new inputs go to $(FUZZ_DIR)/corpus.
FUZZ_DIR   := .output-fuzz
FUZZ_TIME  ?= 60
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZ_SRCS  := util.c proc.c smaps.c numa.c cgroup.c cgroup_labels.c memlimits.c bpf_loader.c \
	shmem_orphans.c held_files.c
FUZZ_OBJS  := $(patsubst %.c,$(FUZZ_DIR)/%.o,$(FUZZ_SRCS))
# parser selector byte by seed file name (see fuzz_parsers.c)
FUZZ_SEL   := status_:0 numa_maps_:1 stat_:2 smaps_:4 mountinfo_:5 \
	proc_cgroup_:6 memory_stat_:7 memory_oom_control_:8 memory_events_:8 memory_pressure_:8 numa_stat_:9 \
	zoneinfo_:10 node_:11

$(FUZZ_DIR)/%.o: %.c $(USER_HDRS) include/memacct.h $(SKELS)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(INCLUDES) -c $< -o $@

$(FUZZ_DIR)/fuzz_parsers: tests/fuzz/fuzz_parsers.c $(FUZZ_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(INCLUDES) $^ $(LIBS) -o $@

# soak (docs/daemon.md "Soak"; not in CI): the daemon under SOAK_CLIENTS (1000)
# concurrent loopback scrapes plus cgroup and process churn for SOAK_SECONDS
# (600), then its counters against the workloads' truth and its RSS; root
soak: $(OUTPUT)/memacct $(WORKLOADS)
	$(Q)MEMACCT=$(CURDIR)/$(OUTPUT)/memacct WORKLOADS=$(CURDIR)/$(OUTPUT)/workloads \
		SOAK_OUT=$(CURDIR)/$(OUTPUT)/soak.json /usr/bin/python3 tests/soak.py

# scale (docs/deploy/scale.md; not in CI, ~6 min): the daemon's scrape at 100
# and 1,000 cgroups, then one replayed as 64 targets into one Prometheus with
# the job and alert rules: series, bytes, rule evaluation, query latency; root
scale: $(OUTPUT)/memacct
	$(Q)MEMACCT=$(CURDIR)/$(OUTPUT)/memacct SCALE_OUT=$(CURDIR)/$(OUTPUT)/scale.json \
		/usr/bin/python3 tests/scale.py

# soak-oom (docs/soak-oom.md; not in CI, ~35 min): the OOM forecast of run
# over SOAK_OOM_RUNS (20) runs of each leak shape, 8 at a time, and its calm
# shapes for SOAK_OOM_CALM_S (1800) s; the table of docs/soak-oom.md; root
soak-oom: $(OUTPUT)/memacct $(WORKLOADS)
	$(Q)MEMACCT=$(CURDIR)/$(OUTPUT)/memacct WORKLOADS=$(CURDIR)/$(OUTPUT)/workloads \
		SOAK_OOM_OUT=$(CURDIR)/$(OUTPUT)/soak-oom.json /usr/bin/python3 tests/soak_oom.py

fuzz: $(FUZZ_DIR)/fuzz_parsers
	$(Q)rm -rf $(FUZZ_DIR)/seeds && mkdir -p $(FUZZ_DIR)/seeds $(FUZZ_DIR)/corpus
	$(Q)for f in tests/data/*; do b=$${f##*/}; \
		for m in $(FUZZ_SEL); do p=$${m%%:*}; n=$${m##*:}; \
			case $$b in $$p*) { printf "\\$$(printf %o $$n)"; cat $$f; } \
				> $(FUZZ_DIR)/seeds/$$b; break;; esac; done; done
	$(Q)cd $(FUZZ_DIR) && ./fuzz_parsers -max_total_time=$(FUZZ_TIME) -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 corpus seeds ../tests/fuzz/regress

# Kernel matrix in qemu guests (2 NUMA nodes, cgroup v2): docs/vmtest.md.
# VMTEST_KERNELS picks suites; suites in VMTEST_OPTIONAL may fail; suites in
# VMTEST_INTEGRATION also run the whole integration suite on pure cgroup v2.
VMTEST_KERNELS  ?= bullseye bookworm bookworm-backports sid
VMTEST_OPTIONAL ?= sid
VMTEST_INTEGRATION ?= bookworm-backports
# the integration suite in two guests side by side (docs/vmtest.md "CI
# time"): the daemon's suites and the rest, by MEMACCT_SUITES; "" for one
# guest of all. matrix, record, jobsafe and top run on the host only: their
# subject (arguments, the recording and its HTML, memacct's own output,
# tmux) is the same on v1 and v2 and on every kernel
VMTEST_INTEGRATION_PARTS ?= daemon,limits,oom,integration \
	-daemon,-limits,-oom,-integration,-matrix,-record,-jobsafe,-top
vmtest: $(VMTEST_DIR)/bin/memacct $(STATIC_WORKLOADS) $(VMTEST_DIR)/test_integration \
	$(VMTEST_DIR)/bench/spawn
	$(Q)VMTEST_OPTIONAL="$(VMTEST_OPTIONAL)" VMTEST_INTEGRATION="$(VMTEST_INTEGRATION)" \
		VMTEST_INTEGRATION_PARTS="$(VMTEST_INTEGRATION_PARTS)" \
		tests/vmtest/run.sh $(VMTEST_DIR) $(VMTEST_KERNELS)

# A cluster of three guests as nodes, scraped by one Prometheus on the host
# with the job rules (docs/vmtest.md "Cluster", issue 45)
VMTEST_CLUSTER_KERNEL ?= bookworm-backports
vmtest-cluster: $(VMTEST_DIR)/bin/memacct $(STATIC_WORKLOADS)
	$(Q)tests/vmtest/cluster.py $(VMTEST_DIR) $(VMTEST_CLUSTER_KERNEL)

# the guest binaries alone (`make ARCH=arm64` builds these)
vmtest-bins: $(VMTEST_DIR)/bin/memacct $(STATIC_WORKLOADS) $(VMTEST_DIR)/bench/spawn

# what make check and make vmtest run, built before .ci/run starts them side
# by side (then neither builds what the other reads)
test-bins: all $(OUTPUT)/test_unit $(OUTPUT)/test_integration $(WORKLOADS) vmtest-bins \
	$(VMTEST_DIR)/test_integration

# The arm64 matrix (docs/vmtest.md "arm64"): the guest binaries cross-built
# (make ARCH=arm64), Debian arm64 kernels under qemu-system-aarch64 TCG.
# SUITE-16k: the suite's linux-image-arm64-16k (16 KiB pages).
VMTEST_ARM64_KERNELS  ?= bullseye bookworm trixie trixie-16k sid
VMTEST_ARM64_OPTIONAL ?= sid
ARM64_VMTEST_DIR := $(if $(filter arm64,$(HOST_ARCH)),.output,.output-arm64)/vmtest
vmtest-arm64:
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 vmtest-bins
	$(Q)VMTEST_ARCH=arm64 VMTEST_OPTIONAL="$(VMTEST_ARM64_OPTIONAL)" VMTEST_INTEGRATION= \
		tests/vmtest/run.sh $(ARM64_VMTEST_DIR) $(VMTEST_ARM64_KERNELS)

# The whole integration suite on arm64, in one guest (VMTEST_FULL_ARM64_KERNEL,
# default trixie: 6.12, 4 KiB pages), with arm64 builds of the tools it calls
# (tests/vmtest/guest-tools.sh). Too long for CI, so not in .ci/run
# (docs/vmtest.md "arm64": "The whole integration suite").
VMTEST_FULL_ARM64_KERNEL  ?= trixie
VMTEST_FULL_ARM64_TIMEOUT ?= 5400
vmtest-full-arm64:
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 vmtest-bins $(ARM64_VMTEST_DIR)/test_integration
	$(Q)VMTEST_ARCH=arm64 VMTEST_OPTIONAL= VMTEST_INTEGRATION="$(VMTEST_FULL_ARM64_KERNEL)" \
		VMTEST_INTEGRATION_TIMEOUT=$(VMTEST_FULL_ARM64_TIMEOUT) \
		tests/vmtest/run.sh $(ARM64_VMTEST_DIR) $(VMTEST_FULL_ARM64_KERNEL)

# Bench only: empty programs on memacct's hot tracepoints (the floor arm).
$(OUTPUT)/bench/%.bpf.o: tests/bench/%.bpf.c $(VMLINUX)
	$(Q)mkdir -p $(@D)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-Ivmlinux/$(ARCH) -c $< -o $@

# The workloads (fault, cow, switch, syscall, fork, loader, spawn) and
# empty_attach (the floor arm's loader, the only one that needs libbpf).
$(OUTPUT)/bench/%: tests/bench/%.c
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARNINGS) -D_GNU_SOURCE $< $(if $(filter empty_attach toggle,$*),$(LIBS) -lpthread) -o $@

bench: $(OUTPUT)/memacct $(WORKLOADS) $(BENCH_BINS) $(BENCH_OBJS)
	$(Q)tests/bench.sh $(CURDIR)/$(OUTPUT)

# docs/memacct.1 is generated from user/cmd/usage.c (tests/unit_usage.c fails on drift)
# (with the library: --columns' help is made from the column table,
# report_columns_help())
$(OUTPUT)/gen_man: docs/gen_man.c $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(WARNINGS) $(INCLUDES) $^ $(LIBS) $(SCOLS_LIBS) $(CURSES_LIBS) \
		$(HTTP_LIBS) -o $@

man: $(OUTPUT)/gen_man
	$(Q)$(OUTPUT)/gen_man > docs/memacct.1

# docs/completion/ is generated from user/cmd/usage.c too (unit_usage.c: no drift)
$(OUTPUT)/gen_completion: docs/gen_completion.c $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(WARNINGS) $(INCLUDES) $^ $(LIBS) $(SCOLS_LIBS) $(CURSES_LIBS) \
		$(HTTP_LIBS) -o $@

completion: $(OUTPUT)/gen_completion
	$(Q)mkdir -p docs/completion
	$(Q)$(OUTPUT)/gen_completion bash > docs/completion/memacct.bash
	$(Q)$(OUTPUT)/gen_completion zsh > docs/completion/_memacct

# PREFIX/share/doc/memacct: the README and the docs a user reads; the unit
# goes where systemd looks for it under PREFIX, its paths made PREFIX's
DOC_FILES  := README.md docs/metrics.md docs/explain.md docs/audit.md docs/daemon.md \
	docs/numa.md docs/overhead.md docs/memacct.report.v1.schema.json \
	docs/memacct.record.v1.schema.json
DEPLOY_FILES := docs/deploy/daemonset.yaml docs/deploy/uninstall.yaml docs/deploy/grafana-dashboard.json \
	docs/deploy/memacct-kubernetes.rules.yml docs/deploy/memacct-alerts.rules.yml \
	docs/deploy/memacct-jobs.rules.yml
UNIT_DIR   := $(PREFIX)/lib/systemd/system
# the Python module memacct (phase marks): where Debian's python3 looks,
# /usr/lib/python3/dist-packages for the .deb (PREFIX=/usr), else
# PREFIX/lib/python3.X/dist-packages (/usr/local: Debian's site directory)
PYTHON_VERSION := $(shell python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3)
PYTHON_DIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(PYTHON_VERSION)/dist-packages)
SYSCONFDIR ?= /etc

install: $(OUTPUT)/memacct
	install -D -m 0755 $(OUTPUT)/memacct $(DESTDIR)$(PREFIX)/sbin/memacct
	install -D -m 0644 docs/memacct.1 $(DESTDIR)$(PREFIX)/share/man/man1/memacct.1
	install -D -m 0644 docs/completion/memacct.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/memacct
	install -D -m 0644 docs/completion/_memacct \
		$(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_memacct
	install -d $(DESTDIR)$(PREFIX)/share/doc/memacct/deploy $(DESTDIR)$(UNIT_DIR)
	install -m 0644 $(DOC_FILES) $(DESTDIR)$(PREFIX)/share/doc/memacct/
	install -m 0644 $(DEPLOY_FILES) $(DESTDIR)$(PREFIX)/share/doc/memacct/deploy/
	sed 's|/usr/local/|$(PREFIX)/|g' docs/deploy/memacct.service \
		> $(DESTDIR)$(UNIT_DIR)/memacct.service
	chmod 0644 $(DESTDIR)$(UNIT_DIR)/memacct.service
	install -D -m 0644 docs/deploy/memacct.logrotate $(DESTDIR)$(SYSCONFDIR)/logrotate.d/memacct
	install -D -m 0644 user/memacct.py $(DESTDIR)$(PYTHON_DIR)/memacct.py
	install -D -m 0644 include/memacct_mark.h $(DESTDIR)$(PREFIX)/include/memacct_mark.h

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/sbin/memacct $(DESTDIR)$(PREFIX)/share/man/man1/memacct.1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/memacct \
		$(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_memacct \
		$(DESTDIR)$(UNIT_DIR)/memacct.service $(DESTDIR)$(SYSCONFDIR)/logrotate.d/memacct \
		$(DESTDIR)$(PYTHON_DIR)/memacct.py $(DESTDIR)$(PREFIX)/include/memacct_mark.h
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/memacct

# make deb: a Debian binary package (dpkg-deb) of `make install` under /usr,
# man page gzipped and LICENSE as the copyright file (Debian policy 12.3,
# 12.5); Depends from dpkg-shlibdeps on the binary. The unit is installed,
# not enabled. make deb-check builds it and checks it (tests/deb_check.sh).
DEB_VERSION := $(shell sed -n 's/^\#define MEMACCT_VERSION "\(.*\)"/\1/p' user/util.h)
DEB_ARCH   := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB_DIR    := $(OUTPUT)/deb
DEB_ROOT   := $(DEB_DIR)/debian/memacct
DEB        := $(OUTPUT)/memacct_$(DEB_VERSION)_$(DEB_ARCH).deb
DEB_MAINTAINER ?= $(or $(shell git log -1 --format='%an <%ae>' 2>/dev/null),memacct maintainers <root@localhost>)

deb: $(OUTPUT)/memacct
	$(call msg,DEB,$(DEB))
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_ROOT)/DEBIAN
	$(Q)$(MAKE) --no-print-directory -s install DESTDIR=$(CURDIR)/$(DEB_ROOT) PREFIX=/usr >/dev/null
	$(Q)gzip -9n $(DEB_ROOT)/usr/share/man/man1/memacct.1
	$(Q)install -m 0644 LICENSE $(DEB_ROOT)/usr/share/doc/memacct/copyright
	$(Q)printf 'Source: memacct\n\nPackage: memacct\nArchitecture: any\n' > $(DEB_DIR)/debian/control
	$(Q)cd $(DEB_DIR) && dpkg-shlibdeps -O -e$(CURDIR)/$(DEB_ROOT)/usr/sbin/memacct \
		| sed -n 's/^shlibs:Depends=//p' > depends
	$(Q)test -s $(DEB_DIR)/depends
	$(Q)sed -e 's|@VERSION@|$(DEB_VERSION)|' -e 's|@ARCH@|$(DEB_ARCH)|' \
		-e 's|@MAINTAINER@|$(DEB_MAINTAINER)|' \
		-e "s|@SIZE@|$$(du -sk --exclude=DEBIAN $(DEB_ROOT) | cut -f1)|" \
		-e "s|@DEPENDS@|$$(cat $(DEB_DIR)/depends)|" docs/deb/control.in \
		> $(DEB_ROOT)/DEBIAN/control
	$(Q)echo /etc/logrotate.d/memacct > $(DEB_ROOT)/DEBIAN/conffiles
	$(Q)install -m 0755 docs/deb/prerm $(DEB_ROOT)/DEBIAN/prerm
	$(Q)cd $(DEB_ROOT) && find . -type f ! -path './DEBIAN/*' -printf '%P\n' | sort \
		| xargs md5sum > DEBIAN/md5sums
	$(Q)dpkg-deb --root-owner-group -Zxz --build $(DEB_ROOT) $(DEB) >/dev/null

deb-check: deb
	$(Q)tests/deb_check.sh $(DEB)

# make image: an OCI image (docs/deploy/daemonset.yaml's memacct:VERSION)
# built from Debian packages, no registry: layer 1 is the shared libraries
# the .deb depends on, unpacked by mmdebstrap --variant=extract from the
# host's own apt sources (no shell, no package manager in the image); layer
# 2 is `make install` under /usr. umoci assembles them; the result is an
# OCI archive for `ctr images import` or `skopeo copy oci-archive:...`.
# make image-check runs the image's daemon in its unpacked rootfs
# (tests/image_check.sh).
IMAGE_DIR  := $(OUTPUT)/image
IMAGE      := $(OUTPUT)/memacct-image-$(DEB_VERSION).oci.tar
IMAGE_SUITE := $(shell . /etc/os-release 2>/dev/null && echo $$VERSION_CODENAME)
IMAGE_APT  ?= $(firstword $(wildcard /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list))

image: deb
	$(call msg,IMAGE,$(IMAGE))
	$(Q)rm -rf $(IMAGE_DIR) && mkdir -p $(IMAGE_DIR)/usr-layer
	$(Q)mmdebstrap --quiet --variant=extract --mode=root \
		--include="$$(sed -e 's/([^)]*)//g' -e 's/ //g' $(DEB_DIR)/depends)" \
		--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--dpkgopt='path-exclude=/usr/lib/*/gconv/*' \
		$(IMAGE_SUITE) $(IMAGE_DIR)/libs.tar $(IMAGE_APT)
	$(Q)cp -a $(DEB_ROOT)/usr $(DEB_ROOT)/etc $(IMAGE_DIR)/usr-layer/
	$(Q)tar -C $(IMAGE_DIR)/usr-layer --owner=0 --group=0 -cf $(IMAGE_DIR)/memacct.tar .
	$(Q)umoci init --layout $(IMAGE_DIR)/oci
	$(Q)umoci new --image $(IMAGE_DIR)/oci:$(DEB_VERSION)
	$(Q)umoci raw add-layer --image $(IMAGE_DIR)/oci:$(DEB_VERSION) $(IMAGE_DIR)/libs.tar
	$(Q)umoci raw add-layer --image $(IMAGE_DIR)/oci:$(DEB_VERSION) $(IMAGE_DIR)/memacct.tar
	$(Q)umoci config --image $(IMAGE_DIR)/oci:$(DEB_VERSION) \
		--config.entrypoint /usr/sbin/memacct --config.cmd daemon \
		--config.label org.opencontainers.image.title=memacct \
		--config.label org.opencontainers.image.version=$(DEB_VERSION) \
		--config.label org.opencontainers.image.licenses='GPL-2.0 OR BSD-3-Clause'
	$(Q)tar -C $(IMAGE_DIR)/oci --owner=0 --group=0 -cf $(IMAGE) .

image-check: image
	$(Q)tests/image_check.sh $(IMAGE_DIR)/oci:$(DEB_VERSION)

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX)

# vmlinux/arm64/vmlinux.h without an arm64 machine: the BTF cut from the
# Image of Debian's arm64 kernel of VMLINUX_ARM64_SUITE (vmlinux/image-btf.py)
VMLINUX_ARM64_SUITE ?= trixie
vmlinux-arm64:
	FETCH_ARCH=arm64 tests/vmtest/fetch-kernels.sh .output-arm64/vmtest $(VMLINUX_ARM64_SUITE)
	vmlinux/image-btf.py .output-arm64/vmtest/vmlinuz-$(VMLINUX_ARM64_SUITE) \
		.output-arm64/vmtest/btf-$(VMLINUX_ARM64_SUITE)
	$(BPFTOOL) btf dump file .output-arm64/vmtest/btf-$(VMLINUX_ARM64_SUITE) format c \
		> vmlinux/arm64/vmlinux.h

clean:
	rm -rf $(OUTPUT)$(if $(CROSS),, .output-arm64)

# Exactly what building, testing and the demo need (Debian 12 / Ubuntu 22.04+).
DEPS := make gcc clang llvm chromium libbpf-dev libelf-dev zlib1g-dev pkg-config libjansson-dev \
	libmicrohttpd-dev libsystemd-dev check python3-jsonschema python3-torch python3-numpy prometheus \
	logrotate qemu-system-x86 qemu-system-arm busybox-static bpftrace libcap2-bin libncurses-dev libsmartcols-dev tmux zsh dpkg-dev curl \
	mmdebstrap umoci python3-yaml prometheus-alertmanager
# make vmtest-arm64 cross-builds its guest binaries on an x86 host
DEPS += $(if $(filter x86,$(HOST_ARCH)),gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
DEPS += $(shell apt-cache show bpftool >/dev/null 2>&1 && echo bpftool || echo linux-tools-common linux-tools-generic)
deps:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEPS)
