// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * signals.c - SIGINT/SIGTERM/SIGHUP: stop cleanly, or forward to run's CMD;
 * SIGPIPE ignored where a closed report stream must not end memacct, and
 * what CMD is given back before exec.
 */
#include <signal.h>
#include <stddef.h>
#include "signals.h"

volatile int stop_requested;
volatile int hup_requested;
static volatile sig_atomic_t forward_pid;
static volatile sig_atomic_t hup_reopens;	/* the daemon's SIGHUP */
static struct sigaction inherited_pipe;		/* SIGPIPE as memacct got it */
static sigset_t inherited_mask;
static bool inherited_saved;

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
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

void install_daemon_handlers(void)
{
	hup_reopens = 1;
	install_stop_handlers(0);
	ignore_sigpipe();
}

void signals_save_inherited(void)
{
	inherited_saved = !sigaction(SIGPIPE, NULL, &inherited_pipe) &&
			  !sigprocmask(SIG_SETMASK, NULL, &inherited_mask);
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
