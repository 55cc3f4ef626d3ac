// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "failures.h"

void failures_add(struct failures *f, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (f->prog)
		fprintf(stderr, "%s: FAIL: %s\n", f->prog, s ? s : fmt);
	if (s && f->n < FAILURES_MAX) {
		f->msg[f->n++] = s;
		return;
	}
	free(s);
	if (f->n < FAILURES_MAX)        /* out of memory: keep the format */
		f->msg[f->n++] = (char *)fmt;
	else
		f->dropped++;
}

void failures_json(struct json *j, const char *key, const struct failures *f)
{
	char more[48];

	json_key(j, key);
	json_arr_begin(j);
	for (int i = 0; i < f->n; i++)
		json_str(j, f->msg[i]);
	if (f->dropped) {
		snprintf(more, sizeof(more), "<%d more>", f->dropped);
		json_str(j, more);
	}
	json_arr_end(j);
}
