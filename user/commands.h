/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/* commands.h - one entry point per command (user/<command>.c). */
#ifndef MEMACCT_COMMANDS_H
#define MEMACCT_COMMANDS_H

#include <stdbool.h>

/* Each returns the process exit status (util.h EXIT_*; run: CMD's status). */
int do_run(int argc, char **argv);
int do_attach(int argc, char **argv);
int do_explain(int argc, char **argv);
int do_audit(int argc, char **argv);
int do_daemon(int argc, char **argv);
int do_detach(int argc, char **argv);
int do_top(int argc, char **argv);
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

/*
 * stop_requested - the signal (SIGINT, SIGTERM, SIGHUP) that asked memacct to
 * stop, 0 if none. install_stop_handlers() also forwards those signals to
 * @forward_to_pid when > 0 (run's CMD). In signals.c.
 */
extern volatile int stop_requested;
void install_stop_handlers(int forward_to_pid);
/*
 * set_forward_pid() - forward to @pid from now on (0: to nobody). Clear it
 * before reaping that process, with block_stop_signals(true) around the
 * reaping: a signal must never reach a PID the kernel may have recycled.
 */
void set_forward_pid(int pid);
/* block_stop_signals() - block (true) or unblock SIGINT, SIGTERM, SIGHUP. */
void block_stop_signals(bool block);
/*
 * install_daemon_handlers() - the daemon's: SIGINT and SIGTERM set
 * stop_requested, SIGHUP sets hup_requested (reopen the JSON log: logrotate)
 * instead of stopping; SIGPIPE ignored (a scraper that went away).
 */
extern volatile int hup_requested;
void install_daemon_handlers(void);
/*
 * signals_save_inherited() - first thing in main(): remember SIGPIPE's
 * disposition and the signal mask memacct was started with, for
 * reset_child_signals().
 */
void signals_save_inherited(void);
/*
 * ignore_sigpipe() - a write to a closed pipe or socket fails with EPIPE
 * instead of killing memacct: run (CMD would die with it, PR_SET_PDEATHSIG),
 * attach (the limits it set would stay) and the daemon. top, explain and
 * audit keep SIGPIPE's default: they end as a filter does, with nothing of
 * theirs left behind.
 */
void ignore_sigpipe(void);
/*
 * reset_child_signals() - in the child about to exec CMD (vfork: only the
 * child's own signal state changes): SIGPIPE and the signal mask as
 * memacct was started with them (signals_save_inherited()); an ignored or
 * a blocked signal stays so across exec. Caught signals need nothing: exec
 * resets them to SIG_DFL.
 */
void reset_child_signals(void);

#endif
