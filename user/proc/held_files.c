// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * held_files.c - the files every process maps or holds open (held_files.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include "held_files.h"
#include "smaps.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

static bool wanted(const struct held_visitor *v, uint64_t dev, uint64_t ino)
{
	return !v->wants || v->wants(dev, ino, v->ctx);
}

/* the file mappings of /proc/@pid/maps */
static int walk_maps(const struct held_visitor *v, const char *pid, char **line, size_t *cap)
{
	char path[300];
	FILE *maps;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	maps = fopen(path, "re");
	if (!maps)
		return 0;	/* gone meanwhile */
	while (!err && read_line(line, cap, maps, 2 * PATH_MAX) > 0) {
		uint64_t dev, ino;
		char *file = NULL;

		if (parse_maps_devino(*line, &dev, &ino) || !wanted(v, dev, ino))
			continue;
		err = parse_maps_file(*line, &dev, &ino, &file);
		if (!err)
			err = v->held(dev, ino, HELD_MAPPED, atoi(pid), file, v->ctx);
		else if (err == -EINVAL)
			err = 0;
		free(file);
	}
	fclose(maps);
	return err;
}

/* the open regular files of /proc/@pid/fd */
static int walk_fds(const struct held_visitor *v, const char *pid)
{
	char path[300], link[PATH_MAX];
	struct dirent *fe;
	DIR *fds;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	fds = opendir(path);
	if (!fds)
		return 0;
	while (!err && (fe = readdir(fds))) {
		struct stat st;
		ssize_t n;

		if (fe->d_name[0] == '.' || fstatat(dirfd(fds), fe->d_name, &st, 0))
			continue;	/* gone meanwhile, or not ours to see */
		if (!S_ISREG(st.st_mode) || !wanted(v, st.st_dev, st.st_ino))
			continue;
		n = readlinkat(dirfd(fds), fe->d_name, link, sizeof(link) - 1);
		if (n >= 0)
			link[n] = '\0';
		err = v->held(st.st_dev, st.st_ino, HELD_OPEN, atoi(pid), n >= 0 ? link : NULL,
			      v->ctx);
	}
	closedir(fds);
	return err;
}

int held_files_walk_pids(const struct held_visitor *v, const pid_t *pids, size_t n)
{
	char *line = NULL, pid[16];
	size_t cap = 0;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		snprintf(pid, sizeof(pid), "%d", (int)pids[i]);
		err = walk_maps(v, pid, &line, &cap);
		if (!err)
			err = walk_fds(v, pid);
	}
	free(line);
	return err;
}

int held_files_walk(const struct held_visitor *v)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	if (!proc)
		return -errno;
	while (!err && (de = readdir(proc))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		err = walk_maps(v, de->d_name, &line, &cap);
		if (!err)
			err = walk_fds(v, de->d_name);
	}
	free(line);
	closedir(proc);
	return err;
}
