// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* usage.c - the usage text of every command: --help, `memacct help` and memacct(1). */
#include <string.h>
#include "pin.h"
#include "commands.h"
#include "daemon_oom.h"
#include "report_print.h"
#include "usage.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define MAN_DATE "2026-11-23"

#define OPT_JSON { "-j, --json", NULL, "JSON output (docs/memacct.report.v1.schema.json), one object\nper line; errors go to stderr." }
#define OPT_HELP { "-h, --help", NULL, "This help; exit 0." }
#define OPT_LIMITS \
	{ "--memory-max", "SIZE", "Set the cgroup's hard limit (memory.max / memory.limit_in_bytes)\n" \
	  "while memacct runs; SIZE: 4G, 4GiB, 512M, or 10% of MemTotal." }, \
	{ "--memory-high", "SIZE", "Set the throttling limit (memory.high; cgroup v2 only)." }, \
	{ "--memory-swap-max", "SIZE", "Set the swap limit (memory.swap.max /\n" \
	  "memory.memsw.limit_in_bytes less the memory limit)." }, \
	{ "--force", NULL, "Allow a limit below the cgroup's current usage (the kernel\n" \
	  "reclaims or OOM-kills at once)." }

#define OPT_DMA_PINS_USAGE \
	{ "--dma-pins", "auto|on|off", "DMA-pin windows (ioctl on character devices, setsockopt\n" \
	  "SOL_XDP, io_uring_register): attribute FOLL_PIN pages no mm\n" \
	  "counter shows, at a syscall tracepoint cost on every task. auto\n" \
	  "(default): on when the host has an NVIDIA, RDMA uverbs or vfio\n" \
	  "device or an AF_XDP socket. Off, such pins are reported as the\n" \
	  "host's dma_pinned_unattributed_bytes." }

#define OPT_TABLE \
	{ "--columns", "LIST", USAGE_HELP_COLUMNS }, \
	{ "--raw", NULL, "The process table alone for scripts, as lsblk --raw:\n" \
	  "one space between unpadded fields, a blank inside a field as \\x20,\n" \
	  "headers by column name, none of the lines for a person; with\n" \
	  "--bytes every figure an integer." }, \
	{ "--csv", NULL, "The process table alone as CSV (RFC 4180) for scripts: a header\n" \
	  "line of column names, then a line per process and the total (PID\n" \
	  "and PPID empty, COMM \"TOTAL (cgroup)\" or \"TOTAL (processes)\"),\n" \
	  "figures in bytes (no ~ mark: -j has dma_pinned_estimate), PIDs as\n" \
	  "integers\n" \
	  "and the default columns followed by EXITED (1: exited), ELAPSED_S\n" \
	  "with --interval (the header once, each report's rows ending with\n" \
	  "its TOTAL) and TIME with -T." }

#define OPT_OOM_WARN_USAGE \
	{ "--oom-warn", "DUR", "Warn (stderr, and \"oom_warnings\" in the report) when the\n" \
	  "cgroup's memory that cannot be reclaimed (anon, shmem, kernel)\n" \
	  "is forecast to reach its limit (the smallest of its own and its\n" \
	  "ancestors'; none: the host's MemTotal) within DUR (default 60s;\n" \
	  "0: never)." }

static const struct usage_opt run_opts[] = {
	OPT_JSON,
	{ "-i, --interval", "DUR", "Also print a report every DUR (500ms, 2s, 1m) while CMD runs." },
	{ "--keep-cgroup", NULL, "Leave the cgroup in place at the end, named memacct-keep-PID-X\n" \
	  "(not memacct-run-PID-X): later runs do not remove it." },
	{ "--job", "NAME", "Name the run's job (1-64 of A-Z a-z 0-9 . _ : @ + -): its cgroup\n"
	  "is memacct-run-PID-X.job-NAME and the daemon's memacct_job label\n"
	  "run/NAME, the same on every node that runs NAME." },
	{ "--params", "N", "The model's parameter count (1.5e9, 7000000000, 80B, 350M):\n"
	  "every change of a phase is also given in bytes per parameter." },
	{ "--expect-bytes-per-param", "B", "With --params: the bytes per parameter a phase's\n"
	  "cumulative anon + shmem is held to (default 16: mixed-precision\n"
	  "Adam); what exceeds it is named by class and mapping." },
	{ "--record", "FILE", "Write every report (-i) and phase mark, and the final report,\n"
	  "to FILE as JSON lines (without -i also a sample every second),\n"
	  "for memacct report FILE. A write error stops the recording\n"
	  "only (said at the end); the job goes on." },
	OPT_OOM_WARN_USAGE,
	OPT_DMA_PINS_USAGE,
	OPT_TABLE,
	OPT_LIMITS,
	OPT_HELP,
	{ NULL },
};

static const struct usage_opt attach_opts[] = {
	{ "-c, --cgroup", "NAME|PATH", "The cgroup: absolute cgroupfs path, path below the memory\n"
	  "cgroup root, or a directory name unique below it (job_123, a pod\nor scope directory)." },
	{ "-p, --pid", "PID", "The memory cgroup of PID; the report keeps PID and its\ndescendants." },
	OPT_JSON,
	{ "-i, --interval", "DUR", "One report per DUR (default 5s)." },
	{ "-d, --duration", "DUR", "Stop after DUR (default: at SIGINT or SIGTERM)." },
	OPT_DMA_PINS_USAGE,
	OPT_TABLE,
	OPT_LIMITS,
	{ "--record", "FILE", "Write every report and the summary to FILE as JSON lines, for\n"
	  "memacct report FILE (a write error stops the recording only)." },
	OPT_OOM_WARN_USAGE,
	OPT_HELP,
	{ NULL },
};

static const struct usage_opt top_opts[] = {
	{ "-c, --cgroup", "NAME|PATH", "The subtree to watch (as attach; default: the memory\n"
	  "cgroup root, i.e. every process of the host)." },
	{ "-s, --sort", "COL", USAGE_HELP_TOP_SORT },
	{ "-g, --cgroups", NULL, "Start in the cgroups view (Tab switches views)." },
	{ "-i, --interval", "DUR", "Refresh every DUR (default 2s)." },
	{ "-n, --iterations", "N", "Quit after N refreshes." },
	OPT_HELP,
	{ NULL },
};

static const struct usage_opt explain_opts[] = {
	{ "-p, --pid", "PID", "The process to explain (same as the positional PID)." },
	{ "-c, --cgroup", "NAME|PATH", "Explain every process of that cgroup (shared pages counted\nonce) instead of one PID." },
	OPT_JSON,
	{ "-b, --by", "mapping|file|kind", "The table: largest mappings (default), files, or kinds\n"
	  "(anon, file, shmem, heap, stack, device, other)." },
	{ "-t, --top", "N", "Rows per table (default 10); with -j, entries of mappings and\nfiles (default: all)." },
	{ "-w, --watch", "DUR", "Attach BPF for DUR and count the CoW copies made meanwhile\n(root, BTF)." },
	{ "--pin-path", "DIR", "Without --watch, CoW since fork from a memacct daemon pinned\n"
	  "under DIR (default " PIN_DEFAULT_DIR "), when one runs." },
	{ "--numa-threshold", "PCT", "Name a process in the verdict when at least PCT percent (0 to\n"
	  "100, default 10) and 16 MiB of its resident pages are off its\nhome NUMA node." },
	OPT_HELP,
	{ NULL },
};

static const struct usage_opt audit_opts[] = {
	{ "-c, --cgroup", "NAME|PATH", "Audit that cgroup and everything below it (repeatable);\n"
	  "default: every memory cgroup with processes of its own." },
	{ "--pinned-cap", "SIZE|PCT%", "Cap on a cgroup's pinned memory (mlocked + pinned_vm + DMA\n"
	  "pins); PCT% of MemTotal, or of the cgroup's limit with --of-limit." },
	{ "--per-process-cap", "SIZE|PCT%", "Cap on one process's pinned memory." },
	{ "--of-limit", NULL, "Percentages are of the cgroup's memory limit." },
	{ "--watch", "DUR", "Keep auditing: a line the moment a cap is crossed or back\n"
	  "within (BPF events), /proc re-read every DUR." },
	{ "--host", "PCT%", "Host check: exit 1 when the host's FOLL_PIN pinned pages\n"
	  "exceed PCT% of MemTotal, naming the processes that pin most." },
	{ "--pin-path", "DIR", "Without --watch, DMA pins from a memacct daemon pinned under\n"
	  "DIR (default " PIN_DEFAULT_DIR "); none there: DMA unknown." },
	{ "--enforce-rlimit", NULL, "Lower the soft RLIMIT_MEMLOCK of the audited processes to\n"
	  "the cap (needs --cgroup; logged in /run/memacct/rlimit.log)." },
	{ "--restore-rlimit", NULL, "Put back every soft RLIMIT_MEMLOCK that --enforce-rlimit\nlowered." },
	OPT_JSON,
	OPT_HELP,
	{ NULL },
};

static const struct usage_opt daemon_opts[] = {
	{ "--listen", "ADDR:PORT", "Serve /metrics and /healthz there (default 127.0.0.1:9464); IPv6\n" \
	  "in brackets: [::1]:9464." },
	{ "--interval", "DUR", "Collect every DUR (default 10s)." },
	{ "--pin-path", "DIR", "Pin the kernel side under DIR (default " PIN_DEFAULT_DIR ")\n"
	  "so counters survive a restart." },
	{ "--json-log", "FILE", "Append one memacct.report/v1 line per interval, and one\n"
	  "memacct.oom/v1 line per OOM kill; SIGHUP reopens it." },
	{ "--oom-log", "FILE", "Append each OOM kill's post-mortem there (default\n"
	  OOM_LOG_DEFAULT ", kept to 4 MiB + one old file; none: off),\n"
	  "for memacct oom." },
	{ "--cgroup-filter", "PATH", "Only cgroups at or below PATH (repeatable)." },
	{ "--job-from", "REGEX", "Name each cgroup's job (memacct_job label) by REGEX's capture\n"
	  "group in its path (POSIX extended, unanchored: '/batch/([^/]+)');\n"
	  "repeatable, tried in order before the built-in rules." },
	{ "--top-processes", "N", "Pid-labelled series for the N largest by RSS (default 0, 0..10000)." },
	{ "--stop-kernel-side", NULL, "Remove the pinned kernel side and exit (as detach)." },
	{ "--bpf-stats", NULL, "Turn on kernel bpf_stats for the memacct_bpf_* self-metrics\n"
	  "(two clock reads per program run)." },
	OPT_DMA_PINS_USAGE,
	{ "--metrics-allow", "REGEX", "Only the families whose name (without _total) REGEX matches\n"
	  "whole (POSIX extended: 'memacct_(rss|cow_copied)_bytes')." },
	{ "--metrics-deny", "REGEX", "Leave out the families REGEX matches whole\n"
	  "('memacct_process_.*': no per-process series)." },
	{ "--check-args", NULL, "Check the other options, say \"arguments ok\" and exit 0 (2: a\n"
	  "usage error); no root, kernel or cgroup needed (a manifest's command\n"
	  "line, make deploy-check)." },
	OPT_HELP,
	{ NULL },
};

static const struct usage_opt detach_opts[] = {
	{ "--pin-path", "DIR", "The daemon's pin directory (default " PIN_DEFAULT_DIR ")." },
	OPT_HELP,
	{ NULL },
};

static const struct usage_opt reclaim_opts[] = {
	{ "-c, --cgroup", "NAME|PATH", "The cgroup (as attach): absolute cgroupfs path, path below\n"
	  "the memory cgroup root, or a directory name unique below it." },
	{ "--bytes", "SIZE", "Reclaim SIZE bytes (4096, 256M, 1G; binary units). Default:\n"
	  "with --file-only the cgroup's file LRUs (memory.stat active_file +\n"
	  "inactive_file), else its whole charge (memory.current)." },
	{ "--file-only", NULL, "Page cache only: \"SIZE swappiness=0\" (Linux 6.11+). An older\n"
	  "kernel is used only where anon cannot be reclaimed anyway (no\n"
	  "swap, or memory.swap.max 0, and no demotion); else exit 3." },
	{ "--dry-run", NULL, "Reclaim nothing: what SIZE would free, by class, from\n"
	  "memory.stat (clean page cache, anon and shmem to swap, reclaimable\n"
	  "slab) and what stays. Any user, cgroup v1 too. A real run prints the\n"
	  "same prediction beside what was freed." },
	OPT_JSON,
	OPT_HELP,
	{ NULL },
};

static const struct usage_opt oom_opts[] = {
	{ "--since", "DUR", "Only the kills of the last DUR (10m, 2h, 1d)." },
	{ "--last", NULL, "The newest kill only, in full (every process)." },
	{ "--pin-path", "DIR", "The daemon's pin directory (default " PIN_DEFAULT_DIR "):\n"
	  "the kernel's records of the last 64 kills." },
	{ "--oom-log", "FILE", "The daemon's OOM log (default " OOM_LOG_DEFAULT ")." },
	OPT_JSON,
	OPT_HELP,
	{ NULL },
};

static const struct usage_opt mark_opts[] = {
	{ "-e, --end", NULL, "Close the current phase (no NAME)." },
	OPT_HELP,
	{ NULL },
};

static const struct usage_opt report_opts[] = {
	OPT_JSON,
	{ "-c, --cgroup", "PATH", "FILE is the daemon's --json-log: the reports of this cgroup\n"
	  "(its path below the hierarchy root, as the log names it)." },
	{ "--html", "OUT", "Draw the recording into OUT, one self-contained HTML page (no\n"
	  "network, no script): memory over time stacked by class, RSS per\n"
	  "process, the limit, phases, OOM kills and exits; the phases'\n"
	  "tables and the final report under it. Nothing printed." },
	OPT_HELP,
	{ NULL },
};

static const struct usage_opt help_opts[] = {
	{ NULL },
};

static const struct usage_opt global_opts[] = {
	OPT_JSON,
	{ "-v, --verbose", NULL, "Show libbpf's log (verifier messages when loading fails)." },
	{ "-h, --help", NULL, "The list of commands; exit 0." },
	{ "-V, --version", NULL, "Print the version; exit 0." },
	{ "-T, --timestamp", NULL, "Reports start with the wall-clock time (HH:MM:SS; JSON:\n\"timestamp\", RFC 3339 UTC)." },
	{ "--bytes", NULL, "Tables give exact byte counts instead of KiB/MiB/GiB." },
	{ "-o, --output", "FILE", "Reports go to FILE (created or truncated), not stdout: run's\nCMD keeps stdout to itself, so -j output never mixes with it." },
	{ NULL },
};

static const struct cmd_usage usages[] = {
	{ "run", "run CMD in a memory cgroup of its own; report where its memory went",
	  "run [OPTIONS] -- CMD [ARGS...]",
	  "Runs CMD in a memory cgroup of its own (memacct-run-PID-X, X random) below\n"
	  "memacct's own, so every limit on memacct binds CMD; waits for CMD and every\n"
	  "descendant (memacct is their subreaper), and reports per process and for the\n"
	  "cgroup where the memory went: RSS, peaks, copy-on-write copies, zero fills,\n"
	  "pinned and remote-NUMA memory, faults, OOM kills; then a diagnosis (verdicts).\n"
	  "Removes the cgroup and exits with CMD's status (127 not found, 126 not\n"
	  "executable, 128+N killed by signal N). SIGINT, SIGTERM and SIGHUP go to CMD.",
	  run_opts,
	  "The cgroup is made below memacct's own memory cgroup (/proc/self/cgroup), so\n"
	  "the caller's limits and accounting include CMD; memacct itself stays out of it.\n"
	  "On cgroup v2 a cgroup with processes cannot have memory children: memacct alone\n"
	  "in its cgroup moves into a leaf there (memacct-ctl-PID-X, undone at the end);\n"
	  "else the cgroup goes to the nearest ancestor that can have one, only when no\n"
	  "cgroup on the way has a memory limit; else run exits 3 and says why (start it\n"
	  "alone in a cgroup: exec memacct run). At the root, memacct enables the memory\n"
	  "controller in cgroup.subtree_control if it is not, with a warning. The TOTAL\n"
	  "row is the cgroup's charge after everything exited; process rows marked x are\n"
	  "at exit, K OOM-killed (sizes at the kill; each kill's post-mortem follows the\n"
	  "table: docs/metrics.md \"OOM kills\"). docs/run.md has the details. The job\n"
	  "comes first: when the reader of the reports goes away (a closed pipe: | head),\n"
	  "the reports stop and run goes on waiting for CMD. CMD gets SIGPIPE and the signal mask as memacct got them." },
	{ "attach", "watch an existing cgroup or process; report at each interval and at the end",
	  "attach --cgroup NAME|PATH | --pid PID [OPTIONS] [INTERVAL [COUNT]]",
	  "Accounts an existing memory cgroup and everything below it from now on: one\n"
	  "report per interval, a summary with a diagnosis at the end (SIGINT, SIGTERM,\n"
	  "SIGHUP or --duration; a reader of the reports that goes away, | head, ends it\n"
	  "with status 0). Flows (CoW, zero fills, faults) count since attach only. Limits\n"
	  "set with --memory-* are restored at every end (after SIGKILL or a crash, by\n"
	  "the next memacct run or attach). INTERVAL [COUNT], as vmstat has them:\n"
	  "--interval INTERVAL, and stop after COUNT reports (the last is the summary).",
	  attach_opts,
	  "With --pid, the process's memory cgroup is attached and the report keeps that\n"
	  "process and its descendants. On cgroup v2 that is the nearest cgroup, its own\n"
	  "or an ancestor, with the memory controller, where the kernel charges it; a\n"
	  "cgroup named by --cgroup without the memory controller is refused with status\n"
	  "3. On hosts with several NUMA nodes, run and attach also sample each\n"
	  "process's resident bytes off its home node (/proc/PID/numa_maps, at most once\n"
	  "a second)." },
	{ "top", "live table of processes (or cgroups) by RSS, CoW, pinned, faults",
	  "top [--cgroup NAME|PATH] [--sort COL] [--cgroups] [OPTIONS]",
	  "A live view for a terminal, refreshed in place: the processes (or, with\n"
	  "--cgroups or Tab, the cgroups) of a subtree sorted by a column, with the\n"
	  "figures of run and attach (one BPF session; flows count since top started).\n"
	  "Keys: q or Ctrl-C quit; Tab processes/cgroups; < > previous/next column;\n"
	  "r reverse; space refresh now; m RSS (usage), a anon, f file, s shmem,\n"
	  "e reclaim, l pinned, c CoW, z zero fill, F faults, N remote, n name, p PID\n"
	  "(procs). Needs a terminal; -j is refused (attach -j is for scripts).",
	  top_opts,
	  "A cgroup's row is for the cgroup and everything below it, as its memory.stat\n"
	  "counts: USAGE, ANON, FILE, SHMEM and RECLAIM from memory.stat; PINNED and the\n"
	  "flows of its live processes from their rows; flows of processes that exited\n"
	  "in it from the BPF cgroups map. --bytes shows exact bytes." },
	{ "explain", "one process or cgroup, mapping by mapping: what its memory is and who owns it",
	  "explain PID | -p PID | --cgroup NAME|PATH [OPTIONS]",
	  "Why RSS is what it is (docs/explain.md): /proc/PID/smaps split into private\n"
	  "anon, shared, page cache (clean: reclaimable; dirty), shmem, mlocked and swap;\n"
	  "PSS and USS; per mapping, file or kind; bytes per NUMA node (numa_maps) and off\n"
	  "the home node (docs/numa.md); and a verdict. Needs no BPF unless --watch.",
	  explain_opts,
	  "PSS is the sum of the per-mapping Pss lines of smaps, each truncated to whole\n"
	  "kB by the kernel (as smem does); smaps_rollup sums before truncating, so it\n"
	  "reads up to about 0.2% higher. Without --watch, CoW is unknown (null in JSON)." },
	{ "audit", "pinned memory of every process against caps; exit 1 when one is exceeded",
	  "audit [--cgroup NAME|PATH ...] [OPTIONS]",
	  "Pinned memory (mlocked VmLck + long-term pinned VmPin) per cgroup and process,\n"
	  "against caps; driver-pinned memory apart, as an estimate (docs/audit.md).\n"
	  "Exits 1 when a cap is exceeded.",
	  audit_opts, NULL },
	{ "daemon", "always-on: the kernel side pinned, Prometheus/OpenMetrics over HTTP",
	  "daemon [OPTIONS]\ndaemon --stop-kernel-side [--pin-path DIR]",
	  "Keeps the kernel side attached and pinned, serves /metrics (Prometheus 0.0.4\n"
	  "or OpenMetrics) and /healthz, and optionally writes a JSON log\n"
	  "(docs/daemon.md). SIGTERM/SIGINT stop it; the pinned kernel side stays.",
	  daemon_opts, NULL },
	{ "detach", "remove a daemon's pinned kernel side",
	  "detach [--pin-path DIR]",
	  "Removes the daemon's pinned kernel side (programs, links, maps).",
	  detach_opts, NULL },
	{ "reclaim", "reclaim a cgroup's page cache (v2 memory.reclaim), predicted and measured",
	  "reclaim --cgroup NAME|PATH [--bytes SIZE] [--file-only] [--dry-run] [OPTIONS]",
	  "Asks the kernel to reclaim one cgroup's memory, a targeted drop_caches\n"
	  "(docs/reclaim.md): writes SIZE to its cgroup v2 memory.reclaim, which acts on\n"
	  "that cgroup and its descendants only, and prints memory.current and each\n"
	  "memory.stat class before and after, and what was freed (after less before).\n"
	  "Exit 0 when the kernel reclaimed SIZE, 1 when it reclaimed less (partial: the\n"
	  "report says what was freed), 2 bad option, SIZE or unknown cgroup, 3 not root,\n"
	  "cgroup v1, no memory.reclaim or --file-only impossible, 4 write failed.",
	  reclaim_opts,
	  "cgroup v1 has no memory.reclaim: reclaim refuses there (exit 3). Its\n"
	  "memory.force_empty would reclaim all of the cgroup's memory, anon too, which\n"
	  "is not what was asked, and memacct never lowers a limit to force reclaim.\n"
	  "MADV_FREE'd anon pages (LazyFree) sit on the file LRUs and are freed as\n"
	  "clean cache even with --file-only; memory.stat counts them as anon." },
	{ "oom", "the OOM kills a daemon recorded, each with its cause",
	  "oom [--since DUR] [--last] [OPTIONS]",
	  "The OOM kills a memacct daemon recorded, oldest first, each with its cause\n"
	  "(docs/metrics.md \"OOM kills\"); --last: the newest in full, the post-mortem\n"
	  "made at the kill: the victim's memory at the kill, the limited cgroup's\n"
	  "stocks, its processes, what grew before it, the verdict. Exit 0, 3 when\n"
	  "neither the OOM log nor the pinned history can be read.",
	  oom_opts,
	  "Kills the daemon never read (it was down and its ring overflowed) come from\n"
	  "the kernel side's pinned records of the last 64: the victim's figures and\n"
	  "the limit only, marked [kernel record only]." },
	{ "mark", "from inside `memacct run`: start a phase or end the last one",
	  "mark NAME | mark --end",
	  "Marks a phase of the job from inside it, for shell scripts run by memacct\n"
	  "run: closes the current phase and opens NAME (1 to 200 bytes of UTF-8), or\n"
	  "--end closes it. Returns once memacct took its snapshot. Without\n"
	  "MEMACCT_MARK_FD (not under memacct run) it does nothing and exits 0; exit 4\n"
	  "when memacct answered an error or is gone. No root needed.",
	  mark_opts,
	  "memacct run gives CMD and its descendants MEMACCT_MARK_FD, a SOCK_SEQPACKET\n"
	  "socket: a process sends the line \"phase NAME\" or \"end\" and reads \"ok\" once\n"
	  "the snapshot is taken, or \"error WHY\". The C header memacct_mark.h and the\n"
	  "Python module memacct (with memacct.phase(\"step\"): ...) speak it too. At\n"
	  "the end run prints per phase the change of every figure of each process and\n"
	  "of the cgroup, and the mappings that appeared, grew, shrank or vanished\n"
	  "(docs/run.md \"Phases\")." },
	{ "report", "read back a recording (run/attach --record) or a daemon log; --html draws it",
	  "report [-j] FILE\nreport [-j] --cgroup PATH FILE\nreport --html OUT FILE",
	  "Prints a recording of run or attach (--record FILE) as the command printed\n"
	  "it: each -i report, then the final report with its phases; -j gives the JSON\n"
	  "lines run -j gave. With --cgroup, FILE is the daemon's --json-log and each\n"
	  "collection of that cgroup is a report, the last one final. Exit 0; 1 the file\n"
	  "ends early (no final report: memacct killed, a line cut off; what it holds is\n"
	  "printed); 2 bad option, a file that cannot be read or is neither.",
	  report_opts,
	  "A recording (docs/run.md \"Recording\") is JSON lines: a header (format\n"
	  "memacct.record/v1, the command, its start, the page size, MemTotal, the\n"
	  "cgroup and its limit), then one line per snapshot with its time and kind\n"
	  "(interval, sample, mark, exit, oom, final): the first the whole report as -j\n"
	  "prints it, each later one the changes to the one before. -T prints the time\n"
	  "of the replay, not of the recording." },
	{ "help", "this list, or a command's options",
	  "help [COMMAND]",
	  "The list of commands, or COMMAND's options; exit 0.",
	  help_opts, NULL },
	{ NULL, NULL, NULL, NULL, global_opts, NULL },
};

#define NUSAGES ((int)(sizeof(usages) / sizeof(usages[0])))

const struct cmd_usage *usage_all(int *n)
{
	*n = NUSAGES;
	return usages;
}

const struct cmd_usage *usage_find(const char *name)
{
	for (int i = 0; i < NUSAGES; i++)
		if (usages[i].name && name && !strcmp(usages[i].name, name))
			return &usages[i];
	return NULL;
}

/* @text with every line after a '\n' indented by @indent spaces. */
static void put_indented(FILE *f, const char *text, int indent)
{
	for (const char *p = text; *p; p++) {
		fputc(*p, f);
		if (*p == '\n')
			fprintf(f, "%*s", indent, "");
	}
}

const char *usage_opt_help(const struct usage_opt *o)
{
	if (!strcmp(o->help, USAGE_HELP_COLUMNS))
		return report_columns_help();
	if (!strcmp(o->help, USAGE_HELP_TOP_SORT))
		return top_sort_help();
	return o->help;
}

static void print_opts(FILE *f, const struct usage_opt *o)
{
	char head[64];

	for (; o->names; o++) {
		snprintf(head, sizeof(head), "%s%s%s", o->names, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		if (strlen(head) > 22)
			fprintf(f, "  %s\n  %-22s ", head, "");
		else
			fprintf(f, "  %-22s ", head);
		put_indented(f, usage_opt_help(o), 25);
		fputc('\n', f);
	}
}

void usage_print(FILE *f, const char *name)
{
	const struct cmd_usage *u = usage_find(name);

	if (!u) {
		fprintf(f, "Usage: memacct [-j] [-v] COMMAND [OPTIONS]\n\nCommands:\n");
		for (int i = 0; i < NUSAGES; i++) {
			if (!usages[i].name)
				continue;
			/* the forms as they always were (scripts grep "  memacct
			 * top "), then what the command is for */
			for (const char *p = usages[i].synopsis; p; p = strchr(p, '\n')) {
				p += *p == '\n';
				fprintf(f, "  memacct %.*s\n", (int)strcspn(p, "\n"), p);
			}
			fprintf(f, "      %s\n", usages[i].purpose);
		}
		fputs("\nGlobal options (before COMMAND; -j also after it):\n", f);
		print_opts(f, global_opts);
		fputs("\nExit codes: 0 ok, 1 audit violation, 2 usage, 3 environment (root, BTF),\n"
		      "4 runtime; run exits with CMD's status. `memacct help COMMAND` or\n"
		      "`memacct COMMAND --help` for its options; man memacct for all.\n", f);
		return;
	}
	fputs("Usage: memacct ", f);
	put_indented(f, u->synopsis, 7);
	fputs("\n  ", f);
	put_indented(f, u->summary, 2);
	fputc('\n', f);
	if (u->opts[0].names) {
		fputs("Options:\n", f);
		print_opts(f, u->opts);
	}
}

/* Text for troff: '-' and '\' escaped, '\n' ends a line, no line starts with '.' or '\''. */
static void man_text(FILE *f, const char *s)
{
	bool bol = true;

	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		bol = *s == '\n';
		if (*s == '-')
			fputs("\\-", f);
		else if (*s == '\\')
			fputs("\\e", f);
		else
			fputc(*s, f);
	}
}

static void man_opts(FILE *f, const struct usage_opt *o)
{
	for (; o->names; o++) {
		fputs(o->arg ? ".TP\n.BI \"" : ".TP\n.B ", f);
		man_text(f, o->names);
		if (o->arg) {
			fputs(" \" \"", f);
			man_text(f, o->arg);
			fputc('"', f);
		}
		fputc('\n', f);
		man_text(f, usage_opt_help(o));
		fputc('\n', f);
	}
}

/* SYNOPSIS: one line per form of each command. */
static void man_synopsis(FILE *f)
{
	for (int i = 0; i < NUSAGES; i++) {
		const char *s = usages[i].synopsis, *nl;

		if (!usages[i].name)
			continue;
		for (; s; s = nl ? nl + 1 : NULL) {
			char line[256];
			size_t len;

			nl = strchr(s, '\n');
			len = nl ? (size_t)(nl - s) : strlen(s);
			snprintf(line, sizeof(line), "%.*s", (int)len, s);
			fputs(".B memacct\n[\\fB\\-j\\fR] [\\fB\\-v\\fR]\n", f);
			man_text(f, line);
			fputs("\n.br\n", f);
		}
	}
}

/* One subsection per command: its summary, details and options. */
static void man_commands(FILE *f)
{
	for (int i = 0; i < NUSAGES; i++) {
		if (!usages[i].name)
			continue;
		fputs(".SS ", f);
		man_text(f, usages[i].name);
		fputc('\n', f);
		man_text(f, usages[i].summary);
		fputc('\n', f);
		if (usages[i].details) {
			fputs(".PP\n", f);
			man_text(f, usages[i].details);
			fputc('\n', f);
		}
		man_opts(f, usages[i].opts);
	}
}

/* DROPPED EVENTS: one paragraph per cause of dropped_events_by_cause. */
static void man_dropped_events(FILE *f)
{
	fputs(".SH DROPPED EVENTS\n"
	      "Nothing is lost silently: each cause is counted in "
	      "\\fBdropped_events_by_cause\\fR (JSON) and named in the table's warning.\n"
	      "The maps are sized from the host (every process and memory cgroup it can "
	      "have), and a full map loses no flow: a cause below costs detail, and bytes "
	      "that found no record at all are in \\fBflows_lost\\fR (JSON), a WARNING "
	      "line and the daemon's memacct_flows_lost_bytes_total.\n"
	      ".TP\n.B proc_map_full\n"
	      "The BPF map of processes was full: a process got no record of its own; its "
	      "flows were counted in its cgroup's record (in the totals, not in a row).\n"
	      ".TP\n.B proc_alloc_failed\n"
	      "A process record could not be allocated at that moment (the map allocates on "
	      "use): as proc_map_full; a later event of the process makes it.\n"
	      ".TP\n.B dma_range_map_full\n"
	      "A range pinned by the NVIDIA driver (CUDA pinned host memory) found the map of "
	      "pinned ranges full: its pages are counted in dma_pinned, its mapping is not named.\n"
	      ".TP\n.B dma_range_slots_full\n"
	      "A range pinned by a syscall that names it (AF_XDP XDP_UMEM_REG) found its "
	      "process holding 4 such ranges already: its pages are counted in dma_pinned, "
	      "its mapping is not named.\n"
	      ".TP\n.B nvidia_range_unknown\n"
	      "An NVIDIA RM allocate or free call whose parameters memacct could not read (a "
	      "layout of another size than the one it knows, or the parameters not resident): "
	      "its pins are counted by the ioctl's window, the range is not known.\n"
	      ".TP\n.B cow_map_full\n"
	      "A batch of CoW copies whose mapping was not recorded (the cow_maps map full, or "
	      "the 8 of the process's 128 mapping slots its mapping may take all taken, the "
	      "first with more pages): the pages are counted in cow_copied and cow_file_copied, in "
	      "cow_by_mapping's unattributed part. Nothing is lost: not in dropped_events, and "
	      "the text says it in a NOTE.\n"
	      ".TP\n.B page_cache_map_full\n"
	      "Pages added to the page cache of a file that got no record (the page_cache "
	      "map full): they are in the cgroup's memory.stat file, not in page_cache_by_file. "
	      "Nothing is lost: not in dropped_events.\n"
	      ".TP\n.B oom_ring_full\n"
	      "The ring of OOM kill records was full (an OOM storm nobody read): that kill is "
	      "counted in oom_kills_total and kept in the daemon's oom_history (memacct oom), "
	      "its post-mortem not made.\n"
	      ".TP\n.B cgroup_map_full\n"
	      "The BPF map of cgroups was full: a cgroup got no record; its flows were counted "
	      "in the attached cgroup's (the daemon: the memory root's) record instead.\n"
	      ".TP\n.B ringbuf_full\n"
	      "The ring buffer of exit records was full: that exited process has no row; its "
	      "flows are in the totals (folded into its cgroup in the kernel), so it is not "
	      "counted in dropped_events (a NOTE line in tables).\n"
	      ".TP\n.B task_storage\n"
	      "Per\\-thread fault state could not be created (memory pressure): that fault was "
	      "not classified as CoW or zero fill.\n"
	      ".TP\n.B dma_window_full\n"
	      "4,096 threads were inside DMA\\-pinning syscalls at once: that syscall's pins "
	      "were not measured.\n"
	      ".TP\n.B oom_victim_map_full\n"
	      "Kernels whose mark_victim passes only a pid: 1,024 OOM victims had not exited "
	      "yet, that kill was not counted.\n"
	      ".TP\n.B vma_busy\n"
	      "Always 0 now: a fault whose VMA cannot be read is counted in "
	      "fault_unclassified_bytes instead; the key stays for scripts.\n", f);
}

void usage_man(FILE *f)
{
	fputs(".\\\" SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)\n"
	      ".\\\" Generated by `make man` from user/cmd/usage.c; edit that file, not this one.\n"
	      ".TH MEMACCT 1 " MAN_DATE " \"memacct " MEMACCT_VERSION "\" \"User Commands\"\n"
	      ".SH NAME\n"
	      "memacct \\- account pinned, copy\\-on\\-write, remote\\-NUMA and reclaimable memory "
	      "per cgroup and process\n.SH SYNOPSIS\n", f);
	man_synopsis(f);
	fputs(".SH DESCRIPTION\n"
	      ".B memacct\n"
	      "attaches CO\\-RE eBPF programs to kernel tracepoints and joins what they count "
	      "(copy\\-on\\-write copies, zero fills, pinned memory peaks, NUMA placement and "
	      "migrations, OOM kills, process lifecycle) with the kernel's own accounting "
	      "(/proc/PID/status, memory.stat) into one report per process and per memory cgroup. "
	      "docs/metrics.md defines each figure and names its kernel source.\n", f);
	man_commands(f);
	fputs(".SH GLOBAL OPTIONS\n"
	      "Given before the command; \\fB\\-j\\fR is also accepted after it.\n", f);
	man_opts(f, global_opts);
	fputs(".SH DURATIONS AND SIZES\n"
	      "DUR: 500ms, 2s, 1.5s, 5m, 1h; a bare number is seconds. "
	      "SIZE: bytes, or with K, M, G, T (powers of 1024; KiB, MiB, GiB, TiB too); "
	      "where PCT% is allowed, a percentage of MemTotal (audit \\-\\-of\\-limit: of the "
	      "cgroup's memory limit).\n"
	      ".SH VERDICTS\n"
	      "The final report of \\fBrun\\fR and \\fBattach\\fR ends with a diagnosis, one "
	      "sentence per finding with its figures (JSON: \\fBverdict\\fR and "
	      "\\fBverdict_details\\fR): copy\\-on\\-write blow\\-up of forked workers, with cause "
	      "and fix; the reclaimable share of mapped files; pinned memory against 10\\-15% of "
	      "RAM; memory off the home NUMA node. \\fBattach\\fR counts CoW since attach "
	      "only.\n", f);
	man_dropped_events(f);
	fputs(".SH ENVIRONMENT\n"
	      ".TP\n.B MEMACCT_MARK_FD\n"
	      "Set by \\fBrun\\fR for CMD and its descendants: the phase-mark channel "
	      "(write \"phase NAME\" or \"end\", read one line: \"ok\" or \"error WHY\"); "
	      "\\fBmemacct mark\\fR, include/memacct_mark.h and the Python module memacct.py "
	      "speak it.\n"
	      ".TP\n.B MEMACCT_FAULT_HOOK\n"
	      "auto (default), tracepoint, perf or none: the fault classifier's hook; none "
	      "loads no fault program (CoW, zero fill and remote NUMA allocation figures are "
	      "then null).\n"
	      ".TP\n.B MEMACCT_PHASES\n"
	      "1: \\fBrun\\fR prints where its start and stop time went, one line on stderr; "
	      "2: also each program's verification (ms, instructions, states).\n"
	      ".TP\n.B MEMACCT_UMA\n"
	      "1 or 0: treat the host as unified memory (GB10, Jetson) or not, whatever it "
	      "looks like.\n"
	      ".TP\n.B JOURNAL_STREAM\n"
	      "Set by systemd: the daemon's stderr lines carry syslog priorities.\n"
	      ".PP\n"
	      "MEMACCT_PROCS_MAX, MEMACCT_CGROUPS_MAX and MEMACCT_WALK_CGROUPS_MAX lower "
	      "memacct's bounds, for tests only.\n"
	      ".SH EXAMPLES\n"
	      ".TP\n.B memacct run \\-\\- python3 train.py\n"
	      "Per process and for the job's cgroup: RSS, CoW copies of forked DataLoader "
	      "workers, pinned memory, reclaimable page cache; a verdict at the end.\n"
	      ".TP\n.B memacct run \\-\\-memory\\-max 8G \\-i 10s \\-\\-record job.rec \\-\\- ./job\n"
	      "An 8 GiB limit on CMD's own cgroup, a report every 10 s, all of it recorded; "
	      "\\fBmemacct report \\-\\-html job.html job.rec\\fR draws it.\n"
	      ".TP\n.B memacct attach \\-\\-cgroup job123 10s\n"
	      "An existing cgroup (a Slurm job, a container), a report every 10 s until SIGINT.\n"
	      ".TP\n.B memacct explain 4711\n"
	      "What the memory of PID 4711 is, mapping by mapping, and what reclaim could take.\n"
	      ".TP\n.B memacct audit \\-\\-pinned\\-cap 10%\n"
	      "Every process whose pinned memory is above 10% of RAM; exit 1 if any.\n"
	      ".TP\n.B memacct daemon \\-\\-listen 127.0.0.1:9443\n"
	      "Always on: /metrics for Prometheus, /healthz; docs/deploy has a systemd unit "
	      "and a DaemonSet.\n", f);
	fputs(".SH EXIT STATUS\n"
	      "0 success; 1 audit violation; 2 usage error (bad option, unknown or ambiguous "
	      "cgroup, no such process, a kernel thread or zombie as PID: the same in every command); "
	      "3 environment (not root, kernel without BTF, no memory "
	      "cgroup hierarchy); 4 runtime failure (also when the report could not be written, "
	      "e.g. to a full disk). \\fBrun\\fR exits with CMD's status, 127 "
	      "when CMD cannot be found, 126 when it cannot be executed (the report then has no "
	      "process row and says why), 128+N when CMD was killed by signal N. A reader of "
	      "the reports that went away (a closed pipe) is no failure: the reports stop, "
	      "\\fBrun\\fR exits with CMD's status, \\fBattach\\fR restores its limits and "
	      "exits 0. A standard input, output or error that was closed (>&\\-) is opened "
	      "on /dev/null at start.\n"
	      ".SH FILES\n"
	      "/sys/kernel/btf/vmlinux, /sys/kernel/tracing, /sys/fs/cgroup, "
	      "/proc/PID/{status,stat,smaps,numa_maps}, /sys/devices/system/node, "
	      PIN_DEFAULT_DIR ", /run/memacct.\n"
	      ".SH SEE ALSO\n"
	      "bpftool(8), cgroups(7), proc(5), smem(8); in the source tree: docs/metrics.md, "
	      "docs/memacct.report.v1.schema.json, docs/explain.md, docs/audit.md, "
	      "docs/daemon.md, docs/numa.md, docs/overhead.md.\n", f);
}
