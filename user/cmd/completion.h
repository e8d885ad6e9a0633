/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * completion.h - shell completion generated from the usage text (usage.h):
 * `make completion` writes docs/completion/memacct.bash and
 * docs/completion/_memacct, `make install` installs them, and
 * tests/unit_usage.c fails when they differ from what these print.
 */
#ifndef MEMACCT_COMPLETION_H
#define MEMACCT_COMPLETION_H

#include <stdio.h>

/* completion_bash() - the bash completion script (complete -F _memacct) on @f. */
void completion_bash(FILE *f);

/* completion_zsh() - the zsh completion function (#compdef memacct) on @f. */
void completion_zsh(FILE *f);

#endif
