// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_watchdog.c - a deadline for every integration test.
 *
 * The runner is CK_NOFORK, where libcheck enforces no test case timeout: a
 * test blocked for good (a waitpid() on a daemon that never exits, a command
 * whose output never ends) held CI until its 90-minute limit and named
 * nothing (CI of 9b22ffb: the daemon suite, after test_slowloris's last
 * line). Each test is armed by its case's first fixture with
 * WATCHDOG_FACTOR times the case's timeout (times CK_TIMEOUT_MULTIPLIER, as
 * libcheck would). Past it, the watchdog thread prints the case and every
 * descendant of the runner (what the test waits on), SIGKILLs them (the
 * waitpid() or read() returns: the test goes on, to fail or to end) and
 * counts a failure; WATCHDOG_GRACE_S later, still armed, the test waits on
 * nothing of its own: the run ends there (exit 3), the same lines printed.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "integration.h"

/* nominal timeouts are what a test takes on a quiet host, not bounds: slack
 * for a busy CI host and the TCG guests before a test counts as hung */
#define WATCHDOG_FACTOR 3
#define WATCHDOG_GRACE_S 60
#define MAX_CASES 64

static struct {
	char name[48];
	int timeout_s;
} cases[MAX_CASES];
static int ncases;

static pthread_mutex_t wd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wd_cond;
static pthread_t wd_thread;
static bool wd_started;
/* under wd_lock: the armed test's deadline (0: disarmed), its case, how
 * many tests it has armed (a disarm and re-arm is a new test), fired ones */
static struct timespec wd_deadline;
static int wd_case;	/* its index in cases[] */
static int wd_secs;
static unsigned long wd_gen;
static int wd_fired;

/* whether the CLOCK_MONOTONIC time @a is past */
static bool ts_past(const struct timespec *a)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > a->tv_sec || (now.tv_sec == a->tv_sec && now.tv_nsec >= a->tv_nsec);
}

/* the parent PID in /proc/@pid/stat (after the command's last ')'), -1: gone */
static int ppid_of(int pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] ? atoi(p + 4) : -1;
}

/*
 * Print every descendant of the runner (PID, parent, command line) with
 * @why first, then SIGKILL them when @kill_them.
 */
static void descendants(const char *why, bool kill_them)
{
	enum { MAX_DESC = 512 };
	int desc[MAX_DESC], n = 0, grew = 1;
	DIR *d;
	struct dirent *e;

	const char *test = tcase_name();	/* libcheck's: the test function that runs */

	printf("FAIL: watchdog: %s (case %s) %s (%d s: %d x its timeout); the runner's "
	       "processes:\n", test ? test : "?", cases[wd_case].name, why, wd_secs,
	       WATCHDOG_FACTOR);
	/* the closure of "parent is the runner or one of desc": a few passes */
	while (grew && n < MAX_DESC) {
		grew = 0;
		d = opendir("/proc");
		if (!d)
			break;
		while ((e = readdir(d)) && n < MAX_DESC) {
			int pid = atoi(e->d_name), pp, known = 0;

			if (pid <= 0)
				continue;
			for (int i = 0; i < n; i++)
				known |= desc[i] == pid;
			if (known)
				continue;
			pp = ppid_of(pid);
			for (int i = 0; i < n && pp != getpid(); i++)
				if (desc[i] == pp)
					pp = getpid();
			if (pp == getpid()) {
				desc[n++] = pid;
				grew = 1;
			}
		}
		closedir(d);
	}
	for (int i = 0; i < n; i++) {
		char path[64], cmd[256] = "";
		FILE *f;
		size_t len = 0;

		snprintf(path, sizeof(path), "/proc/%d/cmdline", desc[i]);
		f = fopen(path, "r");
		if (f) {
			len = fread(cmd, 1, sizeof(cmd) - 1, f);
			fclose(f);
		}
		for (size_t j = 0; j + 1 < len; j++)
			if (!cmd[j])
				cmd[j] = ' ';
		cmd[len] = '\0';
		printf("  pid %d (parent %d): %s\n", desc[i], ppid_of(desc[i]), cmd);
	}
	if (kill_them)
		for (int i = 0; i < n; i++)
			kill(desc[i], SIGKILL);
	fflush(stdout);
}

static void *watchdog(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&wd_lock);
	for (;;) {
		unsigned long gen = wd_gen;

		if (!wd_deadline.tv_sec) {
			pthread_cond_wait(&wd_cond, &wd_lock);
			continue;
		}
		if (pthread_cond_timedwait(&wd_cond, &wd_lock, &wd_deadline) != ETIMEDOUT ||
		    gen != wd_gen || !wd_deadline.tv_sec || !ts_past(&wd_deadline))
			continue;
		wd_fired++;
		descendants("is past its deadline", true);
		wd_deadline.tv_sec += WATCHDOG_GRACE_S;
		if (pthread_cond_timedwait(&wd_cond, &wd_lock, &wd_deadline) == ETIMEDOUT &&
		    gen == wd_gen && wd_deadline.tv_sec) {
			descendants("still runs 60 s after its processes were killed: run ended",
				     false);
			_exit(3);
		}
	}
	return NULL;
}

/* the test that starts now, of the case tcase_swept() numbered @i */
static void arm(int i)
{
	const char *mult = getenv("CK_TIMEOUT_MULTIPLIER");
	double m = mult ? atof(mult) : 1;
	int secs = (int)(cases[i].timeout_s * WATCHDOG_FACTOR * (m > 0 ? m : 1));

	pthread_mutex_lock(&wd_lock);
	if (!wd_started) {
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&wd_cond, &ca);
		pthread_condattr_destroy(&ca);
		wd_started = !pthread_create(&wd_thread, NULL, watchdog, NULL);
	}
	wd_case = i;
	wd_secs = secs;
	clock_gettime(CLOCK_MONOTONIC, &wd_deadline);
	wd_deadline.tv_sec += secs;
	wd_gen++;
	pthread_cond_signal(&wd_cond);
	pthread_mutex_unlock(&wd_lock);
}

/* a checked fixture has no argument: one per case */
#define ARM(n) static void arm_##n(void) { arm(n); }
ARM(0) ARM(1) ARM(2) ARM(3) ARM(4) ARM(5) ARM(6) ARM(7) ARM(8) ARM(9) ARM(10) ARM(11)
ARM(12) ARM(13) ARM(14) ARM(15) ARM(16) ARM(17) ARM(18) ARM(19) ARM(20) ARM(21) ARM(22)
ARM(23) ARM(24) ARM(25) ARM(26) ARM(27) ARM(28) ARM(29) ARM(30) ARM(31) ARM(32) ARM(33)
ARM(34) ARM(35) ARM(36) ARM(37) ARM(38) ARM(39) ARM(40) ARM(41) ARM(42) ARM(43) ARM(44)
ARM(45) ARM(46) ARM(47) ARM(48) ARM(49) ARM(50) ARM(51) ARM(52) ARM(53) ARM(54) ARM(55)
ARM(56) ARM(57) ARM(58) ARM(59) ARM(60) ARM(61) ARM(62) ARM(63)
static void (*const arms[MAX_CASES])(void) = {
	arm_0, arm_1, arm_2, arm_3, arm_4, arm_5, arm_6, arm_7, arm_8, arm_9, arm_10, arm_11,
	arm_12, arm_13, arm_14, arm_15, arm_16, arm_17, arm_18, arm_19, arm_20, arm_21, arm_22,
	arm_23, arm_24, arm_25, arm_26, arm_27, arm_28, arm_29, arm_30, arm_31, arm_32, arm_33,
	arm_34, arm_35, arm_36, arm_37, arm_38, arm_39, arm_40, arm_41, arm_42, arm_43, arm_44,
	arm_45, arm_46, arm_47, arm_48, arm_49, arm_50, arm_51, arm_52, arm_53, arm_54, arm_55,
	arm_56, arm_57, arm_58, arm_59, arm_60, arm_61, arm_62, arm_63,
};

TCase *tcase_swept(const char *name, int timeout_s)
{
	TCase *tc = tcase_create(name);

	if (ncases == MAX_CASES) {
		fprintf(stderr, "tests/integration_watchdog.c: more than %d test cases: raise "
				"MAX_CASES\n", MAX_CASES);
		exit(2);
	}
	snprintf(cases[ncases].name, sizeof(cases[ncases].name), "%s", name);
	cases[ncases].timeout_s = timeout_s;
	tcase_set_timeout(tc, timeout_s);
	/* first: armed before the case's own setup, disarmed after its teardown */
	tcase_add_checked_fixture(tc, arms[ncases++], watchdog_disarm);
	tcase_add_unchecked_fixture(tc, NULL, sweep_leftovers);
	return tc;
}

void watchdog_disarm(void)
{
	pthread_mutex_lock(&wd_lock);
	wd_deadline.tv_sec = 0;
	wd_gen++;
	pthread_cond_signal(&wd_cond);
	pthread_mutex_unlock(&wd_lock);
}

int watchdog_fired(void)
{
	int n;

	pthread_mutex_lock(&wd_lock);
	n = wd_fired;
	pthread_mutex_unlock(&wd_lock);
	return n;
}
