/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * signals.h - how memacct stops, forwards SIGINT/SIGTERM/SIGHUP to run's CMD,
 * reopens the daemon's log on SIGHUP, and survives a closed pipe. In signals.c.
 */
#ifndef MEMACCT_SIGNALS_H
#define MEMACCT_SIGNALS_H

#include <stdbool.h>

/*
 * stop_requested - the signal (SIGINT, SIGTERM, SIGHUP) that asked memacct to
 * stop, 0 if none. install_stop_handlers() also forwards those signals to
 * @forward_to_pid when > 0 (run's CMD). SIGHUP, when memacct was started
 * ignoring it (nohup), is left ignored; SIGINT and SIGTERM are caught in any
 * case (a background job's ignored SIGINT must not make `kill -INT` fail).
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
 * arm_stop_deadline() - from now, @seconds to stop: past them (a shutdown
 * stuck in a library's thread), one line on stderr and _exit() with
 * EXIT_RUNTIME, without the cleanup (a pinned kernel side stays, as on
 * any stop of the daemon). Uses SIGALRM and alarm().
 */
void arm_stop_deadline(unsigned int seconds);
/*
 * signals_save_inherited() - first thing in main(): remember SIGPIPE's
 * disposition and the signal mask memacct was started with, for
 * reset_child_signals(), and which stop signals it was started ignoring.
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
 * child's own signal state changes): SIGPIPE, the stop signals memacct was
 * started ignoring and the signal mask as memacct was started with them
 * (signals_save_inherited()); an ignored or a blocked signal stays so
 * across exec. Caught signals need nothing: exec resets them to SIG_DFL.
 */
void reset_child_signals(void);

#endif
