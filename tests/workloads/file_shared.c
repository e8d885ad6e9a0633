/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * file_shared: ground truth that writing through a shared file mapping is
 * never a copy-on-write.
 *
 * Creates a temporary file of MiB (non-zero contents, fsync'ed, so its pages
 * sit in the page cache), maps it MAP_SHARED with PROT_READ|PROT_WRITE,
 * optionally reads every page first (--read-first: the pages get mapped
 * read-only for dirty tracking, so each later write is a write-notify
 * fault), then writes one byte per page.  The page-cache pages are dirtied
 * in place:
 *   file_cow_bytes = loader, cow_bytes = 0, shared_dirty_bytes = MiB * 2^20
 * where loader is the dynamic loader's relocation writes, about ten file-CoW
 * pages in libc's and the program's private data segments, read from
 * /proc/self/smaps before the file is mapped (vm_status.h).
 *
 * The file goes in DIR if given, else $TMPDIR, else /var/tmp, else /tmp, else
 * the current directory (the first that is writable); a disk-backed
 * filesystem is preferable to tmpfs, fs_is_tmpfs says which one it was.  The
 * file is removed before exit.
 *
 * Usage: file_shared [MiB=32] [--read-first] [--hold S] [DIR]
 * Output (stdout):
 *   truth file_bytes B
 *   truth fs_is_tmpfs 0|1
 *   truth file_cow_bytes B
 *   truth cow_bytes 0
 *   truth shared_dirty_bytes B
 *   truth pid PID
 *   ready PID                  (with --hold: then alive S seconds or until
 *                              SIGTERM, its copies mapped)
 */
#include "file_map.h"

int main(int argc, char **argv)
{
	return file_map_main("file_shared", 1, argc, argv);
}
