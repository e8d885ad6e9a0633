// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* gen_completion.c - `make completion`: bash or zsh completion from user/cmd/usage.c. */
#include <stdio.h>
#include <string.h>
#include "completion.h"

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "bash") && strcmp(argv[1], "zsh"))) {
		fprintf(stderr, "usage: gen_completion bash|zsh\n");
		return 2;
	}
	if (!strcmp(argv[1], "bash"))
		completion_bash(stdout);
	else
		completion_zsh(stdout);
	return fflush(stdout) ? 1 : 0;
}
