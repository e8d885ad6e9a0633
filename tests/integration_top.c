// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * integration_top.c - `memacct top` driven as a person would, in a tmux
 * pane (new-session -d, send-keys, capture-pane): a workload of known CoW
 * (tests/workloads/explain_fork.c: each worker copies an eighth of the
 * buffer after top attached) runs in a test cgroup; the screen must show
 * each worker's CoW as the truth and its RSS as /proc/PID/status says,
 * the cgroup's row the sum and its charge as memory.stat says; keys must
 * change the order; q must exit 0, leave the alternate screen, and leave
 * no cgroup or bpffs pin behind. Skipped where tmux is missing (the qemu
 * guests).
 */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "integration.h"

#define SCREEN_WAIT_MS 30000

static char sock[64];		/* tmux -L SOCK: a server of our own */
static char cgtop[CGROOT_MAX + 64], cgw[CGROOT_MAX + 96];
static FILE *wl;		/* the workload's stdout */
static long long wl_pid;

/* The pane's text now (tmux capture-pane -p); caller frees. */
static char *capture(void)
{
	struct result *r = run_cmd("tmux -L %s capture-pane -p -t top 2>/dev/null", sock);
	char *s = strdup(r->out);

	result_free(r);
	return s;
}

/* Capture until the screen contains every one of @needles (NULL-ended). */
static char *wait_screen(const char *const *needles)
{
	for (int t = 0; t < SCREEN_WAIT_MS; t += 200) {
		char *s = capture();
		bool all = true;

		for (int i = 0; needles[i]; i++)
			all = all && strstr(s, needles[i]);
		if (all)
			return s;
		free(s);
		sleep_ms(200);
	}
	{
		char *s = capture();

		ck_abort_msg("top's screen never showed '%s'; last screen:\n%s", needles[0], s);
	}
	return NULL;
}

/* Column @col (by the header line that has @first) of the row whose first
 * field is @key, or whose last field is @key when @by_name; -1 if absent. */
static long long cell(const char *screen, const char *first, const char *col,
		      const char *key, bool by_name)
{
	char *copy = strdup(screen), *save, *line, *tok, *f[24];
	int nh = 0, icol = -1;
	long long v = -1;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *s2, buf[512];
		int n = 0;

		snprintf(buf, sizeof(buf), "%s", line);
		for (tok = strtok_r(buf, " ", &s2); tok && n < 24; tok = strtok_r(NULL, " ", &s2))
			f[n++] = tok;
		if (!n)
			continue;
		if (!nh && !strcmp(f[0], first)) {
			for (int i = 0; i < n; i++) {
				nh++;
				if (!strcmp(f[i], col))
					icol = i;
			}
			ck_assert_msg(icol >= 0, "no column %s in the header", col);
			continue;
		}
		if (nh && n == nh && !strcmp(by_name ? f[n - 1] : f[0], key)) {
			v = atoll(f[icol]);
			break;
		}
	}
	free(copy);
	return v;
}

/* The first fields of the table's rows, in screen order. */
static int row_keys(const char *screen, const char *first, long long *keys, int max)
{
	char *copy = strdup(screen), *save, *line;
	bool in = false;
	int n = 0;

	for (line = strtok_r(copy, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		char w[64] = "";

		sscanf(line, "%63s", w);
		if (!strcmp(w, first)) {
			in = true;
			continue;
		}
		if (in && w[0] >= '0' && w[0] <= '9')
			keys[n++] = atoll(w);
		else if (in)
			break;
	}
	free(copy);
	return n;
}

/* @screen on stdout without its empty lines, under @title. */
static void print_screen(const char *title, const char *screen)
{
	printf("%s (tmux capture-pane -p):\n", title);
	for (const char *p = screen; *p; ) {
		size_t n = strcspn(p, "\n");

		if (n)
			printf("%.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

/* A "Key: N kB" line of /proc/PID/status, in bytes. */
static long long status_bytes(long long pid, const char *key)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%lld/status", pid);
	f = fopen(path, "r");
	ck_assert_msg(f, "%s", path);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = atoll(line + strlen(key) + 1) * 1024;
	fclose(f);
	return v;
}

/* The names in @dir, sorted, as one string (to compare before and after). */
static char *dir_names(const char *dir, const char *prefix)
{
	struct result *r = run_cmd("ls -1 '%s' 2>/dev/null | grep '^%s' | sort", dir, prefix);
	char *s = strdup(r->out);

	result_free(r);
	return s;
}

static long long wl_line(const char *word, long long *t, const char *tkey, int nt)
{
	char line[256], k[64];
	long long v, a;

	while (fgets(line, sizeof(line), wl)) {
		if (sscanf(line, "truth %63s %lld %lld", k, &a, &v) == 3 &&
		    !strcmp(k, tkey) && a < nt)
			t[a] = v;
		else if (sscanf(line, "truth %63s %lld", k, &v) == 2 && !strcmp(k, tkey) && !nt)
			*t = v;
		if (!strncmp(line, word, strlen(word)))
			return atoll(line + strlen(word));
	}
	ck_abort_msg("workload ended before '%s'", word);
	return -1;
}

static void setup(void)
{
	snprintf(sock, sizeof(sock), "memacct-test-top-%d", (int)getpid());
	snprintf(cgtop, sizeof(cgtop), "%s/memacct-test-top-%d", cgroot, (int)getpid());
	snprintf(cgw, sizeof(cgw), "%s/w", cgtop);
	wl = NULL;
	wl_pid = 0;
}

/* The tmux server, the workload and the test cgroups, whatever is left. */
static void cleanup(void)
{
	struct result *r = run_cmd("tmux -L %s kill-server 2>/dev/null; true", sock);

	result_free(r);
	if (wl_pid > 0)
		kill((pid_t)wl_pid, SIGTERM);
	if (wl)
		pclose(wl);
	wl = NULL;
	for (int i = 0; i < 50 && (!access(cgw, F_OK) || !access(cgtop, F_OK)); i++) {
		rmdir(cgw);
		rmdir(cgtop);
		sleep_ms(100);
	}
	wl_pid = 0;
}

static void teardown(void)
{
	cleanup();
}

/* false (and the test skipped) where tmux is missing */
static bool have_tmux(const char *func)
{
	struct result *r = run_cmd("command -v tmux");
	bool ok = !r->status;

	result_free(r);
	if (!ok)
		skip_test(func, "tmux is not installed (the qemu guests have none)");
	return ok;
}

/* The test cgroup and its child w (v2: memory enabled for w). */
static void make_cgroups(void)
{
	ck_assert_msg(!mkdir(cgtop, 0755), "mkdir %s", cgtop);
	if (cgversion == 2) {
		struct result *r = run_cmd("echo +memory > '%s/cgroup.subtree_control'", cgtop);

		ck_assert_int_eq(r->status, 0);
		result_free(r);
	}
	ck_assert_msg(!mkdir(cgw, 0755), "mkdir %s", cgw);
}

static char rcfile[128];

/*
 * `ENV memacct --bytes top --cgroup TESTCG ARGS` in a tmux pane of 160 x 40;
 * its exit status goes to rcfile, then the pane stays (showing "top
 * exited") so that the terminal's state after top can be read.
 */
static void start_top_env(const char *env, const char *args)
{
	struct result *r;

	snprintf(rcfile, sizeof(rcfile), "/tmp/%s.rc", sock);
	unlink(rcfile);
	r = run_cmd("tmux -L %s new-session -d -s top -x 160 -y 40 "
		    "\"%s %s --bytes top --cgroup '%s' %s; echo \\$? > %s; "
		    "echo top exited; sleep 120\"", sock, env, memacct, cgtop + strlen(cgroot),
		    args, rcfile);
	ck_assert_int_eq(r->status, 0);
	result_free(r);
}

static void start_top(const char *args)
{
	start_top_env("", args);
}

/* Send @keys; top must exit 0, off the alternate screen, cursor shown. */
static void quit_top(const char *keys)
{
	const char *exited[] = { "top exited", NULL };
	struct result *r = run_cmd("tmux -L %s send-keys -t top %s", sock, keys);
	char *s;

	result_free(r);
	s = wait_screen(exited);
	ck_assert_msg(!strstr(s, "sorted by"), "top's screen left behind:\n%s", s);
	free(s);
	r = run_cmd("cat %s", rcfile);
	ck_assert_msg(!strcmp(r->out, "0\n"), "top exit status '%s' after %s", r->out, keys);
	result_free(r);
	r = run_cmd("tmux -L %s display -p -t top '#{alternate_on} #{cursor_flag}'", sock);
	ck_assert_msg(!strcmp(r->out, "0 1\n"), "terminal not restored after %s: "
		      "alternate_on cursor_flag %s", keys, r->out);
	result_free(r);
	unlink(rcfile);
}

START_TEST(test_top_tmux)
{
	const char *procs_cow[] = { "processes sorted by COW", NULL, NULL };
	const char *procs_pid[] = { "processes sorted by PID", NULL };
	const char *cgroups[] = { "cgroups (each with those below it) sorted by COW", NULL, NULL };
	char wname[CGROOT_MAX + 96], wl_pid_s[32], *bpf_before, *cg_before, *s, *rc;
	long long eighth = 0, workers[2] = { 0, 0 }, keys[16], want_cow;
	struct result *r;
	int n;

	if (!have_tmux(__func__))
		return;
	bpf_before = dir_names("/sys/fs/bpf", "");
	cg_before = dir_names(cgroot, "memacct-");
	make_cgroups();
	{
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "echo $$ > '%s/cgroup.procs' && exec %s/explain_fork "
			 "64 2 --wait-signal --seconds 90", cgw, workloads);
		wl = popen(cmd, "r");
		ck_assert(wl);
	}
	wl_pid = wl_line("waiting ", &eighth, "cow_bytes_per_worker", 0);

	start_top("--sort cow -i 500ms");
	snprintf(wl_pid_s, sizeof(wl_pid_s), "%lld", wl_pid);
	procs_cow[1] = wl_pid_s;	/* used below as well: in scope to the end */
	free(wait_screen(procs_cow));
	r = run_cmd("tmux -L %s display -p -t top '#{alternate_on}'", sock);
	ck_assert_msg(!strcmp(r->out, "1\n"), "top runs on the alternate screen");
	result_free(r);

	/* the workers copy an eighth of the buffer each, while top watches */
	kill((pid_t)wl_pid, SIGUSR1);
	wl_line("ready ", workers, "worker", 2);
	want_cow = eighth;
	for (int t = 0;; t += 250) {
		char w0[32], w1[32];
		long long c0, c1;

		snprintf(w0, sizeof(w0), "%lld", workers[0]);
		snprintf(w1, sizeof(w1), "%lld", workers[1]);
		s = wait_screen(procs_cow);
		c0 = cell(s, "PID", "COW", w0, false);
		c1 = cell(s, "PID", "COW", w1, false);
		if ((c0 >= want_cow && c1 >= want_cow) || t > SCREEN_WAIT_MS)
			break;
		free(s);
		sleep_ms(250);
	}
	print_screen("top, processes sorted by COW", s);
	for (int i = 0; i < 2; i++) {
		char w[32];

		snprintf(w, sizeof(w), "%lld", workers[i]);
		assert_near("top: worker COW", cell(s, "PID", "COW", w, false), eighth);
		assert_near("top: worker RSS vs VmRSS", cell(s, "PID", "RSS", w, false),
			    status_bytes(workers[i], "VmRSS"));
	}
	/* sorted by COW, largest first: the workers above their parent */
	n = row_keys(s, "PID", keys, 16);
	ck_assert_int_eq(n, 3);
	ck_assert_msg(keys[2] == wl_pid, "COW order: parent %lld last, got %lld %lld %lld",
		      wl_pid, keys[0], keys[1], keys[2]);
	free(s);

	/* p: by PID, smallest first */
	r = run_cmd("tmux -L %s send-keys -t top p", sock);
	result_free(r);
	s = wait_screen(procs_pid);
	n = row_keys(s, "PID", keys, 16);
	ck_assert_int_eq(n, 3);
	ck_assert_msg(keys[0] < keys[1] && keys[1] < keys[2], "PID order %lld %lld %lld",
		      keys[0], keys[1], keys[2]);
	free(s);

	/* c, then Tab: the cgroups by CoW; w has everything, the top cgroup too */
	r = run_cmd("tmux -L %s send-keys -t top c Tab", sock);
	result_free(r);
	/* the view's title and the row of w: a capture can land mid-redraw,
	 * the new title above the old view's rows */
	snprintf(wname, sizeof(wname), "%s", cgw + strlen(cgroot));
	cgroups[1] = wname;
	s = wait_screen(cgroups);
	print_screen("top, cgroups view", s);
	assert_near("top: cgroup COW", cell(s, "PROCS", "COW", wname, true), 2 * eighth);
	ck_assert_int_eq(cell(s, "PROCS", "PROCS", wname, true), 3);
	/* the footer names this view's sort keys, from the column table */
	ck_assert_msg(strstr(s, "m USAGE") && strstr(s, "e RECLAIM") && strstr(s, "c COW") &&
		      !strstr(s, "F FAULTS"), "the cgroups view's footer:\n%s", s);
	{
		struct memcg cg;
		struct memcg_stat st;

		ck_assert(!memcg_of_path(cgroot, cgversion, cgw, &cg));
		ck_assert(!memcg_read_stat(&cg, &st));
		assert_near("top: cgroup ANON vs memory.stat", cell(s, "PROCS", "ANON", wname, true),
			    (long long)st.anon);
		assert_near("top: cgroup USAGE vs usage_in_bytes/current",
			    cell(s, "PROCS", "USAGE", wname, true), (long long)st.usage);
	}
	free(s);

	/* q: exit 0, the terminal back from the alternate screen */
	quit_top("q");

	/* nothing left: bpffs pins as before, no memacct cgroup but ours */
	rc = dir_names("/sys/fs/bpf", "");
	ck_assert_msg(!strcmp(rc, bpf_before), "bpffs before:\n%s\nafter:\n%s", bpf_before, rc);
	free(rc);
	cleanup();
	rc = dir_names(cgroot, "memacct-");
	ck_assert_msg(!strcmp(rc, cg_before), "memacct cgroups before:\n%s\nafter:\n%s",
		      cg_before, rc);
	free(rc);
	free(bpf_before);
	free(cg_before);
}
END_TEST

/* Ctrl-C in the cgroups view (--cgroups) quits as q does. */
START_TEST(test_top_ctrl_c)
{
	const char *cgroups[] = { "cgroups (each with those below it) sorted by USAGE", NULL, NULL };
	char wname[CGROOT_MAX + 96];

	if (!have_tmux(__func__))
		return;
	make_cgroups();
	start_top("--cgroups");
	snprintf(wname, sizeof(wname), "%s", cgw + strlen(cgroot));
	cgroups[1] = wname;
	free(wait_screen(cgroups));
	quit_top("C-c");
}
END_TEST

/*
 * A TERM that terminfo lacks: exit 3 naming it, after stopping the BPF
 * session (initscr() printed and exit()ed with it up), no pin left.
 */
START_TEST(test_top_unknown_term)
{
	const char *exited[] = { "top exited", NULL };
	char *bpf_before, *bpf_after, *s;
	struct result *r;

	if (!have_tmux(__func__))
		return;
	bpf_before = dir_names("/sys/fs/bpf", "");
	make_cgroups();
	start_top_env("TERM=memacct-no-such-term", "");
	s = wait_screen(exited);
	ck_assert_msg(strstr(s, "no terminfo entry for TERM=memacct-no-such-term"), "%s", s);
	free(s);
	r = run_cmd("cat %s", rcfile);
	ck_assert_msg(!strcmp(r->out, "3\n"), "top exit status '%s'", r->out);
	result_free(r);
	unlink(rcfile);
	bpf_after = dir_names("/sys/fs/bpf", "");
	ck_assert_msg(!strcmp(bpf_after, bpf_before), "bpffs before:\n%s\nafter:\n%s",
		      bpf_before, bpf_after);
	free(bpf_before);
	free(bpf_after);
}
END_TEST

/* Without a terminal top refuses with a usage error instead of drawing. */
START_TEST(test_top_needs_terminal)
{
	struct result *r = run_cmd("%s top --iterations 1 < /dev/null 2>&1", memacct);

	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(strstr(r->out, "needs a terminal"), "%s", r->out);
	result_free(r);
	r = run_cmd("%s top --sort nosuch 2>&1", memacct);
	ck_assert_int_eq(r->status, 2);
	ck_assert_msg(strstr(r->out, "bad --sort"), "%s", r->out);
	result_free(r);
}
END_TEST

Suite *top_suite(void)
{
	Suite *s = suite_create("top");
	TCase *tc = tcase_swept("top", 180);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_top_tmux);
	tcase_add_test(tc, test_top_ctrl_c);
	tcase_add_test(tc, test_top_unknown_term);
	tcase_add_test(tc, test_top_needs_terminal);
	suite_add_tcase(s, tc);
	return s;
}
