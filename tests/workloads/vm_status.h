/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * vm_status.h: the kernel's own figures of pinned memory for the workloads'
 * ground truth (mlock_spike.c, mlock_steps.c).
 */
#ifndef MEMACCT_VM_STATUS_H
#define MEMACCT_VM_STATUS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * VmLck (mm->locked_vm) and VmPin (mm->pinned_vm) of /proc/self/status, in
 * bytes; @prog names the workload in messages. Exits 1 when unreadable.
 */
static void read_vm_status(const char *prog, long long *lck, long long *pin)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	*lck = *pin = -1;
	if (!f) {
		fprintf(stderr, "%s: open /proc/self/status: %s\n", prog, strerror(errno));
		exit(1);
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "VmLck:", 6))
			*lck = strtoll(line + 6, NULL, 10) * 1024;
		else if (!strncmp(line, "VmPin:", 6))
			*pin = strtoll(line + 6, NULL, 10) * 1024;
	}
	fclose(f);
	if (*lck < 0 || *pin < 0) {
		fprintf(stderr, "%s: no VmLck/VmPin in /proc/self/status\n", prog);
		exit(1);
	}
}

#endif /* MEMACCT_VM_STATUS_H */
