// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * signals.c - SIGINT/SIGTERM/SIGHUP: stop cleanly, or forward to run's CMD;
 * SIGPIPE ignored where a closed report stream must not end memacct, and
 * what CMD is given back before exec.
 */
#include <signal.h>
#include <stddef.h>
#include <unistd.h>
#include "signals.h"
#include "util.h"

volatile int stop_requested;
volatile int hup_requested;
static volatile sig_atomic_t forward_pid;
static volatile sig_atomic_t hup_reopens;	/* the daemon's SIGHUP */
static struct sigaction inherited_pipe;		/* SIGPIPE as memacct got it */
static sigset_t inherited_mask;
static bool inherited_saved;
/* the stop signals, and which of them memacct was started ignoring (nohup:
 * SIGHUP; a non-interactive shell's `CMD &`: SIGINT) */
static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };
static bool inherited_ign[3];

static void on_stop(int sig)
{
	if (sig == SIGHUP && hup_reopens) {
		hup_requested = 1;
		return;
	}
	stop_requested = sig;
	if (forward_pid > 0)
		kill(forward_pid, sig);
}

void install_stop_handlers(int forward_to_pid)
{
	struct sigaction sa = { .sa_handler = on_stop };

	forward_pid = forward_to_pid;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++) {
		/* nohup's SIGHUP stays ignored, for memacct and for CMD, which
		 * inherits it across exec: `nohup memacct run -- CMD` survives a
		 * hangup. The daemon's SIGHUP reopens its log. SIGINT and SIGTERM
		 * are caught even when ignored on entry (a script's `memacct
		 * attach ... &` then `kill -INT $!`: a shell's background job
		 * starts with SIGINT ignored); CMD gets them back ignored
		 * (reset_child_signals()). */
		if (inherited_ign[i] && stop_sigs[i] == SIGHUP && !hup_reopens)
			continue;
		sigaction(stop_sigs[i], &sa, NULL);
	}
}

void install_daemon_handlers(void)
{
	hup_reopens = 1;
	install_stop_handlers(0);
	ignore_sigpipe();
}

static void on_stop_overdue(int sig)
{
	static const char msg[] = "memacct: still stopping after the stop deadline: exiting now "
				  "(what is pinned stays pinned)\n";

	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(EXIT_RUNTIME);
}

void arm_stop_deadline(unsigned int seconds)
{
	struct sigaction sa = { .sa_handler = on_stop_overdue };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(seconds);
}

void signals_save_inherited(void)
{
	struct sigaction sa;

	inherited_saved = !sigaction(SIGPIPE, NULL, &inherited_pipe) &&
			  !sigprocmask(SIG_SETMASK, NULL, &inherited_mask);
	for (size_t i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++)
		inherited_ign[i] = !sigaction(stop_sigs[i], NULL, &sa) && sa.sa_handler == SIG_IGN;
}

void ignore_sigpipe(void)
{
	signal(SIGPIPE, SIG_IGN);
}

void reset_child_signals(void)
{
	if (!inherited_saved)
		return;
	sigaction(SIGPIPE, &inherited_pipe, NULL);
	for (size_t i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++)
		if (inherited_ign[i])
			signal(stop_sigs[i], SIG_IGN);
	sigprocmask(SIG_SETMASK, &inherited_mask, NULL);
}

void set_forward_pid(int pid)
{
	forward_pid = pid;
}

void block_stop_signals(bool block)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}
