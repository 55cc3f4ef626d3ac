// SPDX-License-Identifier: GPL-2.0
/* Streaming JSON writer, see json.h. */
#include <math.h>
#include <inttypes.h>
#include <string.h>

#include "json.h"

void json_init(struct json *j, FILE *f, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
	j->first[0] = true;
}

static void newline(struct json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* Called before every value (and key): emits separators. */
static void pre_value(struct json *j, bool is_key)
{
	if (j->err)
		return;
	if (j->after_key) {
		if (is_key)
			j->err = 1;      /* key after key */
		j->after_key = false;
		return;
	}
	if (j->depth == 0) {
		if (!j->first[0] || is_key)
			j->err = 1;      /* second top-level value */
		j->first[0] = false;
		return;
	}
	if (j->kind[j->depth] == '{' && !is_key)
		j->err = 1;              /* value without key in object */
	if (j->kind[j->depth] == '[' && is_key)
		j->err = 1;
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	newline(j);
}

static void open_(struct json *j, char c)
{
	pre_value(j, false);
	if (j->err)
		return;
	if (j->depth + 1 >= JSON_MAX_DEPTH) {
		j->err = 1;
		return;
	}
	fputc(c, j->f);
	j->depth++;
	j->kind[j->depth] = c;
	j->first[j->depth] = true;
}

static void close_(struct json *j, char open_c, char c)
{
	if (j->err)
		return;
	if (j->depth == 0 || j->kind[j->depth] != open_c || j->after_key) {
		j->err = 1;
		return;
	}
	bool empty = j->first[j->depth];

	j->depth--;
	if (!empty)
		newline(j);
	fputc(c, j->f);
}

void json_obj_begin(struct json *j) { open_(j, '{'); }
void json_obj_end(struct json *j) { close_(j, '{', '}'); }
void json_arr_begin(struct json *j) { open_(j, '['); }
void json_arr_end(struct json *j) { close_(j, '[', ']'); }

void json_escape(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
}

void json_key(struct json *j, const char *key)
{
	pre_value(j, true);
	if (j->err)
		return;
	fputc('"', j->f);
	json_escape(j->f, key, strlen(key));
	fputs(j->pretty ? "\": " : "\":", j->f);
	j->after_key = true;
}

void json_strn(struct json *j, const char *s, size_t n)
{
	pre_value(j, false);
	if (j->err)
		return;
	fputc('"', j->f);
	json_escape(j->f, s, n);
	fputc('"', j->f);
}

void json_str(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	json_strn(j, s, strlen(s));
}

void json_int(struct json *j, int64_t v)
{
	pre_value(j, false);
	if (!j->err)
		fprintf(j->f, "%" PRId64, v);
}

void json_uint(struct json *j, uint64_t v)
{
	pre_value(j, false);
	if (!j->err)
		fprintf(j->f, "%" PRIu64, v);
}

void json_double(struct json *j, double v)
{
	if (!isfinite(v)) {
		json_null(j);
		return;
	}
	pre_value(j, false);
	if (j->err)
		return;
	/* %.17g round-trips; keep integers recognisable as numbers */
	char buf[64];

	snprintf(buf, sizeof(buf), "%.6f", v);
	if (fabs(v) >= 1e15 || (v != 0 && fabs(v) < 1e-4))
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, j->f);
}

void json_bool(struct json *j, bool v)
{
	pre_value(j, false);
	if (!j->err)
		fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	pre_value(j, false);
	if (!j->err)
		fputs("null", j->f);
}

void json_kv_str(struct json *j, const char *k, const char *v)
{
	json_key(j, k);
	json_str(j, v);
}

void json_kv_int(struct json *j, const char *k, int64_t v)
{
	json_key(j, k);
	json_int(j, v);
}

void json_kv_uint(struct json *j, const char *k, uint64_t v)
{
	json_key(j, k);
	json_uint(j, v);
}

void json_kv_double(struct json *j, const char *k, double v)
{
	json_key(j, k);
	json_double(j, v);
}

void json_kv_bool(struct json *j, const char *k, bool v)
{
	json_key(j, k);
	json_bool(j, v);
}

void json_kv_null(struct json *j, const char *k)
{
	json_key(j, k);
	json_null(j);
}

int json_finish(struct json *j)
{
	if (!j->err && (j->depth != 0 || j->first[0] || j->after_key))
		j->err = 1;
	fputc('\n', j->f);
	if (fflush(j->f) || ferror(j->f))
		j->err = 1;
	return j->err;
}
