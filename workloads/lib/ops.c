// SPDX-License-Identifier: GPL-2.0
/* Operation names, see ops.h. */
#include <stddef.h>

#include "ops.h"

const char *const op_names[NOPS + 1] = {
	"punch", "truncate", "mprotect", "munmap", "dontneed", NULL
};
