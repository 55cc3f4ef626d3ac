/* SPDX-License-Identifier: GPL-2.0 */
/* Strict option value parsers: they reject empty strings, signs, junk and
 * overflow, and return 0 on success, -1 on error (*out untouched). */
#ifndef HUGELAB_OPTS_H
#define HUGELAB_OPTS_H

#include <stddef.h>
#include <stdint.h>

/* "4096", "4K", "512M", "2M", "1G", "3T" (binary units, K/M/G/T in either
 * case, optional trailing "iB" or "B"). */
int parse_size(const char *s, uint64_t *out);
/* Decimal integer in [min, max]. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/*
 * Comma-separated names from `names` (NULL-terminated, at most 64) into a
 * bit mask (bit i = names[i]).  "none" gives 0; "" is an error (an empty
 * option value, e.g. racer --ops=, is a mistake, not a silent "none"), as
 * are unknown, repeated and empty names (",", "a,"); *bad (if not NULL)
 * points at the offending name.
 */
int parse_list(const char *s, const char *const *names, uint64_t *mask,
	       const char **bad);
/*
 * An address: "0x" or "0X" and hex digits, or decimal digits without a
 * leading 0 ("0" alone is decimal 0).  No octal, signs, spaces or suffixes.
 */
int parse_addr(const char *s, uint64_t *out);
/* Index of s in names (NULL-terminated), or -1. */
int parse_choice(const char *s, const char *const *names);
/*
 * The option getopt_long just refused ('?' or ':'), before: optind before
 * that call.  A long option as written ("--bogus", "--quiet=1"); a short
 * one as "-x", also inside a cluster ("-xy"), where argv[optind - 1] is the
 * previous argument.  buf holds the short form.
 */
const char *opt_refused(char *const *argv, int before, char *buf, size_t len);
/* Human size for messages: "2M", "1G", "4K", "123" into buf. */
const char *fmt_size(uint64_t v, char *buf, int size);

/*
 * Writes the message into err (errlen bytes) and returns -1; BAD(...) is
 * `return opt_seterr(err, errlen, ...)` for functions with those
 * parameters (the option and shape checks of every program).
 */
int opt_seterr(char *err, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define BAD(...) return opt_seterr(err, errlen, __VA_ARGS__)

#endif
