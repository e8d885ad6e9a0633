/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * proc.h - parsers of /proc/PID files. Each parse_* function takes the
 * file's text (so it is unit-tested on captured files) and each read_*
 * function reads the live file. All sizes are in bytes.
 * Error returns are negative errno: -ENOENT/-ESRCH when the process is gone,
 * -EINVAL when the text is not what the kernel writes.
 */
#ifndef MEMACCT_PROC_H
#define MEMACCT_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* From /proc/PID/status (fs/proc/task_mmu.c task_mem(), fs/proc/array.c). */
struct proc_status {
	char name[64];		/* Name: (escaped comm) */
	pid_t tgid, ppid;
	uint64_t rss;		/* VmRSS */
	uint64_t rss_anon;	/* RssAnon */
	uint64_t rss_file;	/* RssFile */
	uint64_t rss_shmem;	/* RssShmem */
	uint64_t hwm;		/* VmHWM: the kernel's RSS high-water mark */
	uint64_t locked;	/* VmLck: mm->locked_vm */
	uint64_t pinned;	/* VmPin: mm->pinned_vm */
	uint64_t swap;		/* VmSwap */
	bool has_mm;		/* false for kernel threads and zombies (no Vm* lines) */
};
int parse_status(const char *text, struct proc_status *st);
int read_status(pid_t pid, struct proc_status *st);

/* From /proc/PID/stat (fs/proc/array.c do_task_stat()). */
struct proc_stat {
	char comm[64];		/* between the first '(' and the last ')' */
	char state;
	pid_t ppid;
	uint64_t minflt;	/* whole thread group, incl. dead threads */
	uint64_t majflt;
	uint64_t starttime_ticks;	/* start_boottime in clock ticks */
	uint64_t utime_ticks;	/* user CPU of the thread group, clock ticks */
	uint64_t stime_ticks;	/* system CPU, clock ticks */
	uint64_t vsize;		/* bytes of address space (0 when the line ends before) */
	uint64_t rss_pages;	/* resident pages, get_mm_rss() (0 when the line ends before) */
};
int parse_stat(const char *text, struct proc_stat *st);
int read_stat(pid_t pid, struct proc_stat *st);

/*
 * proc_start_matches() - true when a BPF key's start_boottime_ns is the
 * same process as /proc/PID/stat's starttime (ticks of sysconf(_SC_CLK_TCK)).
 */
bool proc_start_matches(uint64_t start_boottime_ns, uint64_t starttime_ticks);

/* mem_total_bytes() - MemTotal of /proc/meminfo, 0 if unreadable. */
uint64_t mem_total_bytes(void);

#endif
