// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * top.c - memacct top [--cgroup NAME|PATH] [--sort COL] [--cgroups]
 *         [-i DUR] [-n COUNT]
 * A live view for a person at a terminal: the processes or the cgroups of a
 * subtree (default: the whole host), sorted by a chosen column, refreshed
 * in place. The figures are those of run and attach: one session
 * (session.c) attached to the subtree; processes from session_report(),
 * cgroups from memory.stat (stocks), their live processes' rows (pinned,
 * flows) and the BPF cgroups map (flows of processes that exited there).
 * ncurses draws; q or Ctrl-C quits and restores the terminal.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <curses.h>
#include "bpf_loader.h"
#include "cgroup.h"
#include "commands.h"
#include "fill.h"
#include "metric_table.h"
#include "session.h"
#include "signals.h"
#include "usage.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define DEFAULT_INTERVAL_NS (2ULL * 1000000000ULL)
#define KEY_WAIT_MS 200

enum view { VIEW_PROCS = 1, VIEW_CGROUPS = 2, VIEW_BOTH = 3 };

enum col_kind { COL_PID, COL_METRIC, COL_NAME };

/* One column: --sort name and header, its key, where its value is. */
struct top_col {
	const char *name;
	char key;		/* sorts by this column; 0: only with < > */
	int width;
	enum col_kind kind;
	enum metric_id id;	/* COL_METRIC: the row of the metric table (bytes
				 * or a count, as its MF_BYTES says) */
	unsigned int views;
	bool numa;		/* shown only on hosts with several NUMA nodes */
};

/* TOP_COL() and NO_TOP_COL of a METRIC_ROWS row (metric_table.h), apart:
 * TC_ROW() calls TC_FIG(id, flags, rank, name, key, width, views) for a
 * TOP_COL(), nothing for NO_TOP_COL */
#define TOP_COL(rank, name, key, width, views)	TOP_COL_, rank, name, key, width, views
#define NO_TOP_COL				NO_TOP_COL_, 0
#define TC_ROW(id, field, key, family, flags, total, bpf, help, source, col, top_proc, \
	       top_col) \
	TC_ROW_(id, flags, top_col)
#define TC_ROW_(id, flags, has, ...)		TC_ROW_##has(id, flags, __VA_ARGS__)
#define TC_ROW_TOP_COL_(id, flags, ...)		TC_FIG(id, flags, __VA_ARGS__)
#define TC_ROW_NO_TOP_COL_(id, flags, ...)

#define TC_FIG(id, flags, rank, ...)	+ 1
enum { TC_NFIGS = 0 METRIC_ROWS(TC_ROW) };	/* figure columns */
#undef TC_FIG
#define TC_FIG(id, flags, rank, ...)	+ (1ULL << (rank))
_Static_assert((0 METRIC_ROWS(TC_ROW)) == (1ULL << TC_NFIGS) - 1,
	       "metric_table.h TOP_COL() ranks: 0, 1, ... each once");
#undef TC_FIG

/* PID and PROCS, the figures by rank, then the name: it takes the rest of the line */
enum { TC_PID, TC_PROCS, TC_FIGS, TC_COMM = TC_FIGS + TC_NFIGS, TC_CGROUP, NCOLS };

static const struct top_col cols[NCOLS] = {
	[TC_PID]	= { "PID", 'p', 8, COL_PID, M_NR, VIEW_PROCS, false },
	[TC_PROCS]	= { "PROCS", 'p', 6, COL_PID, M_NR, VIEW_CGROUPS, false },
#define TC_FIG(id, flags, rank, name, key, width, views) \
	[TC_FIGS + (rank)] = { name, key, width, COL_METRIC, M_##id, views, \
			       ((flags) & MF_REMOTE) != 0 },
	METRIC_ROWS(TC_ROW)
#undef TC_FIG
	[TC_COMM]	= { "COMM", 'n', 0, COL_NAME, M_NR, VIEW_PROCS, false },
	[TC_CGROUP]	= { "CGROUP", 'n', 0, COL_NAME, M_NR, VIEW_CGROUPS, false },
};

/* One line of the table: a live process, or a cgroup with its subtree. */
struct top_row {
	int id;			/* pid, or the number of live processes */
	char name[PATH_MAX];	/* comm, or the path below the memory root */
	struct metrics m;
};

struct top {
	struct session s;
	enum view view;
	int sort;		/* index in cols[] */
	bool reverse;		/* the other way round from the column's default */
	uint64_t interval_ns;
	struct top_row *rows;
	size_t nrows, cap;
	size_t nprocs;		/* live processes in the subtree */
	double elapsed_s;
};

static bool col_shown(const struct top *t, int i)
{
	return (cols[i].views & t->view) && (!cols[i].numa || t->s.numa_multi);
}

static uint64_t col_u64(const struct top_row *r, const struct top_col *c)
{
	if (c->kind == COL_PID)
		return (uint64_t)r->id;
	return metric_get(&r->m, c->id);
}

/* Numbers largest first, names and PIDs smallest first; @reverse flips. */
static const struct top *sorting;

static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	const struct top_col *c = &cols[sorting->sort];
	int d;

	if (c->kind == COL_NAME) {
		d = strcmp(x->name, y->name);
	} else {
		uint64_t u = col_u64(x, c), v = col_u64(y, c);

		d = (u > v) - (u < v);
		if (c->kind != COL_PID || c->views == VIEW_CGROUPS)
			d = -d;	/* figures: largest first */
	}
	if (!d)	/* stable on screen between refreshes */
		d = strcmp(x->name, y->name) ? strcmp(x->name, y->name) : x->id - y->id;
	return sorting->reverse ? -d : d;
}

static void sort_rows(struct top *t)
{
	sorting = t;
	if (t->nrows)
		qsort(t->rows, t->nrows, sizeof(*t->rows), cmp_rows);
}

static struct top_row *row_add(struct top *t)
{
	struct top_row *row = array_grow(&t->rows, t->nrows, &t->cap, sizeof(*row));

	if (!row)
		return NULL;
	memset(row, 0, sizeof(*row));
	t->nrows++;
	return row;
}

static int cmp_proc_pid(const void *key, const void *elem)
{
	int pid = *(const int *)key;
	const struct proc_row *p = elem;

	if (pid != p->pid)
		return pid < p->pid ? -1 : 1;
	return p->exited;	/* the live row of that pid */
}

/* The live row of @pid in @r (sorted by pid, live before exited), or NULL. */
static const struct proc_row *live_row(const struct report *r, int pid)
{
	const struct proc_row *p = bsearch(&pid, r->procs, r->nprocs, sizeof(*r->procs),
					   cmp_proc_pid);

	return p && !p->exited ? p : NULL;
}

/*
 * One row per cgroup of the subtree, each for itself and everything below
 * it (as memory.stat counts): stocks from memory.stat; pinned and the flows
 * of its live processes from their rows, summed by the metric table's rule
 * (metrics_add_row()); flows of processes that exited in it from the BPF
 * cgroups map.
 */
static int build_cgroup_rows(struct top *t, const struct report *r)
{
	struct memcg *cgs = NULL;
	int *parent = NULL;
	int n, base = (int)t->nrows;

	n = memcg_subtree(&t->s.cg, &cgs);
	if (n < 0)
		return n;
	parent = calloc(n ? n : 1, sizeof(*parent));
	if (!parent) {
		free(cgs);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		struct top_row *row = row_add(t);
		struct metrics exited;
		pid_t *pids = NULL;
		int np;

		if (!row) {
			free(cgs);
			free(parent);
			return -ENOMEM;
		}
		/* walk order: the parent is the nearest earlier one a level up */
		parent[i] = -1;
		for (int j = i - 1; j >= 0; j--)
			if (cgs[j].level == cgs[i].level - 1) {
				parent[i] = j;
				break;
			}
		snprintf(row->name, sizeof(row->name), "%s", cgs[i].rel);
		np = memcg_pids(&cgs[i], false, &pids);
		for (int k = 0; k < np; k++) {
			const struct proc_row *p = live_row(r, pids[k]);

			if (p) {
				metrics_add_row(&row->m, p);
				row->id++;
			}
		}
		free(pids);
		if (!session_cgroup_exited(&t->s, cgs[i].id, &exited))
			metrics_add_flows(&row->m, &exited);
	}
	/* children come after their parent: fold each into it, deepest first */
	for (int i = n - 1; i > 0; i--) {
		struct top_row *row = &t->rows[base + i];

		if (parent[i] < 0)
			continue;
		metrics_add(&t->rows[base + parent[i]].m, &row->m, false);
		t->rows[base + parent[i]].id += row->id;
	}
	for (int i = 0; i < n; i++) {
		struct memcg_stat st;

		if (!memcg_read_stat(&cgs[i], &st))
			metrics_from_memcg_stat(&t->rows[base + i].m, &st);
	}
	free(cgs);
	free(parent);
	return 0;
}

/* A fresh report of the session into t->rows, for the current view. */
static int top_refresh(struct top *t)
{
	struct report r;
	int err;

	err = session_report(&t->s, &r);
	if (err)
		return err;
	t->nrows = 0;
	t->nprocs = 0;
	t->elapsed_s = r.elapsed_s;
	for (size_t i = 0; i < r.nprocs; i++) {
		struct top_row *row;

		if (r.procs[i].exited)
			continue;
		t->nprocs++;
		if (t->view != VIEW_PROCS)
			continue;
		row = row_add(t);
		if (!row) {
			err = -ENOMEM;
			goto out;
		}
		row->id = r.procs[i].pid;
		snprintf(row->name, sizeof(row->name), "%s", r.procs[i].comm);
		row->m = r.procs[i].m;
	}
	if (t->view == VIEW_CGROUPS)
		err = build_cgroup_rows(t, &r);
	sort_rows(t);
out:
	report_free(&r);
	return err;
}

/* The column a key selects in the current view, or -1. */
static int col_of_key(const struct top *t, int key)
{
	for (int i = 0; i < NCOLS; i++)
		if (cols[i].key == key && col_shown(t, i))
			return i;
	return -1;
}

static int col_of_name(const char *name, enum view view)
{
	for (int i = 0; i < NCOLS; i++)
		if ((cols[i].views & view) && !strcasecmp(cols[i].name, name))
			return i;
	return -1;
}

/* @name lowercased, as --sort takes it (any case) and the help writes it */
static const char *lower(char *b, size_t n, const char *name)
{
	size_t i = 0;

	for (; name[i] && i + 1 < n; i++)
		b[i] = (char)tolower((unsigned char)name[i]);
	b[i] = '\0';
	return b;
}

const char *top_sort_help(void)
{
	static char *help;
	char name[16];
	bool first = true;
	size_t len;
	FILE *f;

	if (help || !(f = open_memstream(&help, &len)))
		return help ? help : "Sort by COL (default rss). Keys change it live.";
	fputs("Sort by COL (default rss):", f);
	for (int i = 0; i < NCOLS; i++)	/* the processes view's, both views' */
		if (cols[i].views & VIEW_PROCS) {
			fprintf(f, "%s %s", first ? "" : ",", lower(name, sizeof(name), cols[i].name));
			first = false;
		}
	fputs("; in the cgroups view", f);
	first = true;
	for (int i = 0; i < NCOLS; i++)
		if (cols[i].views == VIEW_CGROUPS) {
			/* rss there is the cgroup's charge: usage (parse_args()) */
			fprintf(f, "%s %s%s", first ? "" : ",", lower(name, sizeof(name), cols[i].name),
				!strcasecmp(cols[i].name, "usage") ? " (rss)" : "");
			first = false;
		}
	fputs(". Keys change it live.", f);
	fclose(f);
	return text_wrap(help, 64);
}

/* After a view switch: the same column, or the one of the same key, or RSS. */
static void sort_follow_view(struct top *t)
{
	int c;

	if (col_shown(t, t->sort))
		return;
	c = cols[t->sort].key ? col_of_key(t, cols[t->sort].key) : -1;
	t->sort = c >= 0 ? c : col_of_key(t, 'm');
}

/* < and >: the previous or next shown column. */
static void sort_step(struct top *t, int dir)
{
	int c = t->sort;

	do
		c = (c + dir + NCOLS) % NCOLS;
	while (!col_shown(t, c));
	t->sort = c;
}

static void put_cell(const struct top_row *row, const struct top_col *c)
{
	char buf[32];

	switch (c->kind) {
	case COL_PID:
		printw("%*llu ", c->width, (unsigned long long)col_u64(row, c));
		break;
	case COL_METRIC:
		if (metric_table[c->id].flags & MF_BYTES)
			printw("%*s ", c->width, fmt_bytes(buf, sizeof(buf), col_u64(row, c)));
		else
			printw("%*llu ", c->width, (unsigned long long)col_u64(row, c));
		break;
	case COL_NAME:
		printw("%s", row->name);
		break;
	}
}

static void draw(const struct top *t)
{
	const struct top_col *sc = &cols[t->sort];
	int rows = LINES, y = 0;
	char now[32];

	erase();
	mvprintw(y++, 0, "memacct top - cgroup %s (v%d) - %zu processes - every %.3gs - %s - "
		 "%.0fs since start", t->s.cg.rel, t->s.cg.version, t->nprocs,
		 t->interval_ns / 1e9, fmt_time_now(now, sizeof(now), false), t->elapsed_s);
	mvprintw(y++, 0, "%s sorted by %s%s; %s count since start",
		 t->view == VIEW_PROCS ? "processes" : "cgroups (each with those below it)",
		 sc->name, t->reverse ? " (reversed)" : "",
		 t->view == VIEW_PROCS ? "COW, ZERO and FAULTS" : "COW and ZERO");
	y++;
	move(y++, 0);
	attron(A_REVERSE);
	for (int i = 0; i < NCOLS; i++) {
		if (!col_shown(t, i))
			continue;
		if (i == t->sort)
			attron(A_BOLD | A_UNDERLINE);
		if (cols[i].kind == COL_NAME)
			printw("%-*s", COLS > getcurx(stdscr) ? COLS - getcurx(stdscr) : 0,
			       cols[i].name);
		else
			printw("%*s ", cols[i].width, cols[i].name);
		if (i == t->sort)
			attroff(A_BOLD | A_UNDERLINE);
	}
	attroff(A_REVERSE);
	for (size_t r = 0; r < t->nrows && y < rows - 1; r++) {
		move(y++, 0);
		for (int i = 0; i < NCOLS; i++)
			if (col_shown(t, i))
				put_cell(&t->rows[r], &cols[i]);
	}
	mvprintw(rows - 1, 0, "q quit  Tab processes/cgroups  < > column  r reverse ");
	for (int i = 0; i < NCOLS; i++)	/* the sort keys of the columns shown */
		if (col_shown(t, i) && cols[i].key)
			printw(" %c %s", cols[i].key, cols[i].name);
	refresh();
}

static void top_usage(FILE *f)
{
	usage_print(f, "top");	/* usage.c */
}

/* top's options (memacct help top), parsed by parse_args() into @t and these. */
struct top_env {
	const char *cgroup;		/* --cgroup NAME|PATH: the subtree ("/" the host) */
	uint64_t iterations;		/* -n: refreshes before quitting; 0: until q */
};

/* The options into @t and @env; 0, -1 after the help, or the exit code after an error. */
static int parse_args(int argc, char **argv, struct top *t, struct top_env *env)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "sort", required_argument, NULL, 's' },
		{ "cgroups", no_argument, NULL, 'g' },
		{ "interval", required_argument, NULL, 'i' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *sortarg = "rss";
	int c;

	while ((c = getopt_long(argc, argv, ":c:s:gi:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			env->cgroup = optarg;
			break;
		case 's':
			sortarg = optarg;
			break;
		case 'g':
			t->view = VIEW_CGROUPS;
			break;
		case 'i':
			if (parse_duration(optarg, &t->interval_ns) || !t->interval_ns) {
				p_err("bad --interval '%s' (examples: 500ms, 2s, 1m)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			if (parse_u64(optarg, &env->iterations) || !env->iterations) {
				p_err("bad --iterations '%s' (a positive number)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			top_usage(stdout);
			return -1;
		default:
			return opt_error("top", c, argv);
		}
	}
	if (optind != argc) {
		p_err("top: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	t->sort = col_of_name(sortarg, t->view);
	if (t->sort < 0 && !strcasecmp(sortarg, "rss"))	/* RSS of a cgroup: its charge */
		t->sort = col_of_name("usage", t->view);
	if (t->sort < 0) {
		p_err("bad --sort '%s' (a column of the %s view: see memacct top --help)",
		      sortarg, t->view == VIEW_PROCS ? "processes" : "cgroups");
		return EXIT_USAGE;
	}
	if (json_output) {
		p_err("top is for a terminal; -j reports come from attach");
		return EXIT_USAGE;
	}
	return 0;
}

/*
 * A key pressed: 'q' quits (true); Tab switches the view and refreshes at
 * once (*@next 0, not counted as a refresh: *@shown back by one), < > r
 * and the columns' keys sort, space refreshes now.
 */
static bool top_key(struct top *t, int ch, uint64_t *next, uint64_t *shown, uint64_t count)
{
	if (ch == 'q' || ch == 'Q')
		return true;
	if (ch == '\t') {
		t->view = t->view == VIEW_PROCS ? VIEW_CGROUPS : VIEW_PROCS;
		sort_follow_view(t);
		*next = 0;	/* rows of the other kind: refresh now */
		if (count)
			(*shown)--;	/* not a new interval */
		return false;
	}
	if (ch == '<' || ch == '>')
		sort_step(t, ch == '<' ? -1 : 1);
	else if (ch == 'r')
		t->reverse = !t->reverse;
	else if (ch == ' ')
		*next = 0;
	else if (col_of_key(t, ch) >= 0)
		t->sort = col_of_key(t, ch);
	else if (ch != KEY_RESIZE)
		return false;
	sort_rows(t);
	draw(t);
	return false;
}

/* Refresh every interval (at most @count times) and answer keys until q or a
 * stop signal. 0, or the negative errno of a refresh that failed. */
static int top_loop(struct top *t, uint64_t count)
{
	uint64_t shown = 0, next = now_ns();
	int err, ch;

	while (!stop_requested) {
		if (now_ns() >= next) {
			if (count && shown++ == count)
				break;
			err = top_refresh(t);
			if (err)
				return err;
			next = ns_after(now_ns(), t->interval_ns);
			draw(t);
		}
		session_poll(&t->s, 0);
		ch = getch();
		if (ch != ERR && top_key(t, ch, &next, &shown, count))
			break;
	}
	return 0;
}

int do_top(int argc, char **argv)
{
	struct top t = { .view = VIEW_PROCS, .interval_ns = DEFAULT_INTERVAL_NS };
	struct top_env env = { .cgroup = "/" };
	struct memcg cg;
	SCREEN *scr;
	int err;

	err = parse_args(argc, argv, &t, &env);
	if (err)
		return err < 0 ? EXIT_OK : err;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		p_err("top needs a terminal on stdin and stdout (attach prints reports "
		      "for scripts)");
		return EXIT_USAGE;
	}
	err = memcg_resolve(env.cgroup, &cg, stderr);
	if (err) {
		p_err("no memory cgroup '%s': %s", env.cgroup, strerror(-err));
		return memcg_resolve_is_usage(err) ? EXIT_USAGE : EXIT_ENV;
	}
	if (loader_check_env())
		return EXIT_ENV;
	/* before initscr(): curses then leaves SIGINT and SIGTERM to us */
	install_stop_handlers(0);
	if (session_start(&t.s, &cg))
		return EXIT_ENV;
	/* not initscr(): on a TERM terminfo lacks it prints and exit()s */
	scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		session_stop(&t.s);
		p_err("top: cannot set up the terminal: no terminfo entry for TERM=%s",
		      getenv("TERM") ? getenv("TERM") : "(unset)");
		return EXIT_ENV;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	timeout(KEY_WAIT_MS);
	sort_follow_view(&t);
	err = top_loop(&t, env.iterations);
	endwin();
	delscreen(scr);
	session_stop(&t.s);
	free(t.rows);
	if (err) {
		p_err("top: building the report failed: %s", strerror(-err));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}
