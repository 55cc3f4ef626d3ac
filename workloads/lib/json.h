/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Streaming JSON writer.
 *
 *   struct json j;
 *   json_init(&j, stdout, 1);          // 1 = indent output
 *   json_obj_begin(&j);
 *   json_kv_str(&j, "schema", "hugelab.shmdb/1");
 *   json_key(&j, "list"); json_arr_begin(&j); json_int(&j, 1); json_arr_end(&j);
 *   json_obj_end(&j);
 *   if (json_finish(&j)) ...           // nonzero: misuse or write error
 *
 * Commas and indentation are handled by the writer.  Strings are escaped per
 * RFC 8259 (", \, control characters as \uXXXX; bytes >= 0x80 are passed
 * through, so the caller supplies UTF-8).  Non-finite doubles become null.
 */
#ifndef HUGELAB_JSON_H
#define HUGELAB_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE *f;
	int pretty;
	int depth;
	int err;                         /* sticky: misuse or I/O error */
	bool first[JSON_MAX_DEPTH];      /* no element written yet at level */
	char kind[JSON_MAX_DEPTH];       /* '{' or '[' */
	bool after_key;
};

void json_init(struct json *j, FILE *f, int pretty);
int json_finish(struct json *j);     /* newline, flush; 0 if well formed */

void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
void json_key(struct json *j, const char *key);

void json_str(struct json *j, const char *s);   /* NULL writes null */
void json_strn(struct json *j, const char *s, size_t n);
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
void json_double(struct json *j, double v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

void json_kv_str(struct json *j, const char *k, const char *v);
void json_kv_int(struct json *j, const char *k, int64_t v);
void json_kv_uint(struct json *j, const char *k, uint64_t v);
void json_kv_double(struct json *j, const char *k, double v);
void json_kv_bool(struct json *j, const char *k, bool v);
void json_kv_null(struct json *j, const char *k);

/* Write s JSON-escaped (without quotes) to f; exposed for tests. */
void json_escape(FILE *f, const char *s, size_t n);

#endif
