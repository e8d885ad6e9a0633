/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/* commands.h - one entry point per command (user/<command>.c). */
#ifndef MEMACCT_COMMANDS_H
#define MEMACCT_COMMANDS_H

#include <stdint.h>

/* Each returns the process exit status (util.h EXIT_*; run: CMD's status). */
int do_run(int argc, char **argv);
int do_attach(int argc, char **argv);
int do_explain(int argc, char **argv);
int do_audit(int argc, char **argv);
int do_daemon(int argc, char **argv);
int do_detach(int argc, char **argv);
int do_top(int argc, char **argv);
/* top_sort_help() - top --sort's help: the columns of each view, named as
 * --sort takes them, from top's column table. Static storage. */
const char *top_sort_help(void);
int do_reclaim(int argc, char **argv);
int do_oom(int argc, char **argv);
int do_mark(int argc, char **argv);
int do_report(int argc, char **argv);
/*
 * detach_kernel_side() - unpin memacct's maps and links under @dir (pin.c
 * pin_remove(); another tool's pins are kept), refused while a daemon
 * holds @dir's lock. Exit status: 0 (also when nothing is pinned there), 2
 * (@dir not on a bpffs), 4 (a daemon runs there, or unpinning failed).
 * In detach.c.
 */
int detach_kernel_side(const char *dir);

struct limits_req;
/*
 * session_getopt() - one of the options run and attach share: -j/--json,
 * -i/--interval DUR into *@interval_ns, --record FILE into *@record_path,
 * the table's (--columns, --raw, --csv), the limits' into @lim,
 * --dma-pins, --oom-warn DUR into *@oom_warn_s (seconds; 0: off). 0 once
 * taken, EXIT_USAGE when its value is bad (said), 1 when @c is none of
 * them. In run.c.
 */
int session_getopt(int c, const char *arg, struct limits_req *lim, const char **record_path,
		   uint64_t *interval_ns, double *oom_warn_s);

#define OPT_OOM_WARN		0x600
#define OOM_WARN_LONG_OPTION	{ "oom-warn", required_argument, NULL, OPT_OOM_WARN }

struct session;
/*
 * session_say_warnings() - the OOM forecast warnings of @s past the first
 * *@seen, each as a line on stderr ("memacct: warning: OOM forecast ...");
 * *@seen becomes their count. In run.c.
 */
void session_say_warnings(const struct session *s, size_t *seen);

#endif
