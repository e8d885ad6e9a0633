/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * file_private: ground truth for copy-on-write of a private file mapping.
 *
 * Creates a temporary file of MiB (non-zero contents, fsync'ed, so its pages
 * sit in the page cache), maps it MAP_PRIVATE with PROT_READ|PROT_WRITE,
 * optionally reads every page first (--read-first: the page-cache pages get
 * mapped read-only, so each later write is a write-protect fault), then
 * writes one byte per page.  Every write copies a page-cache page into a
 * private anonymous page of this process:
 *   file_cow_bytes = MiB * 2^20 + loader, cow_bytes (anonymous CoW) = 0
 * where loader is the dynamic loader's relocation writes, about ten file-CoW
 * pages of their own in libc's and the program's data segments, read from
 * /proc/self/smaps before the file is mapped (vm_status.h).
 *
 * The file goes in DIR if given, else $TMPDIR, else /var/tmp, else /tmp, else
 * the current directory (the first that is writable); a disk-backed
 * filesystem is preferable to tmpfs, fs_is_tmpfs says which one it was.  The
 * file is removed before exit.
 *
 * Usage: file_private [MiB=32] [--read-first] [--hold S] [DIR]
 * Output (stdout):
 *   truth file_bytes B
 *   truth fs_is_tmpfs 0|1
 *   truth file_cow_bytes B
 *   truth cow_bytes 0
 *   truth pid PID
 *   ready PID                  (with --hold: then alive S seconds or until
 *                              SIGTERM, its copies mapped)
 */
#include "file_map.h"

int main(int argc, char **argv)
{
	return file_map_main("file_private", 0, argc, argv);
}
