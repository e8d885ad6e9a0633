// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* gen_man.c - `make man`: docs/memacct.1 from user/cmd/usage.c, on stdout. */
#include <stdio.h>
#include "usage.h"

int main(void)
{
	usage_man(stdout);
	return fflush(stdout) ? 1 : 0;
}
