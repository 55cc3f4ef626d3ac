// SPDX-License-Identifier: GPL-2.0
/* Strict option value parsers, see opts.h. */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "opts.h"

static int parse_digits(const char **pp, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;

	if (!isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)*p)) {
		unsigned int d = (unsigned int)(*p - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
		p++;
	}
	*pp = p;
	*v = x;
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	uint64_t v, mul = 1;
	const char *p = s;

	if (!s || parse_digits(&p, &v))
		return -1;
	switch (*p) {
	case 'k': case 'K': mul = 1ull << 10; p++; break;
	case 'm': case 'M': mul = 1ull << 20; p++; break;
	case 'g': case 'G': mul = 1ull << 30; p++; break;
	case 't': case 'T': mul = 1ull << 40; p++; break;
	default: break;
	}
	if (mul > 1 && (strcmp(p, "iB") == 0 || strcmp(p, "B") == 0))
		p += strlen(p);
	if (*p)
		return -1;
	if (v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;
	const char *p = s;

	if (!s || parse_digits(&p, &v) || *p || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int parse_addr(const char *s, uint64_t *out)
{
	uint64_t x = 0;
	const char *p;

	if (!s)
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		p = s + 2;
		if (!isxdigit((unsigned char)*p))
			return -1;
		for (; isxdigit((unsigned char)*p); p++) {
			unsigned int d = isdigit((unsigned char)*p) ?
				(unsigned int)(*p - '0') :
				(unsigned int)(tolower((unsigned char)*p) - 'a' + 10);

			if (x >> 60)
				return -1;
			x = x << 4 | d;
		}
		if (*p)
			return -1;
		*out = x;
		return 0;
	}
	if (s[0] == '0' && s[1])
		return -1;      /* a leading 0 would be octal to strtoull */
	return parse_u64(s, 0, UINT64_MAX, out);
}

int parse_choice(const char *s, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

int parse_list(const char *s, const char *const *names, uint64_t *mask,
	       const char **bad)
{
	uint64_t m = 0;
	const char *p = s;

	if (bad)
		*bad = s;
	if (!s || !*s)
		return -1;      /* "--ops=": a mistake, "none" says none */
	if (strcmp(s, "none") == 0) {
		*mask = 0;
		return 0;
	}
	for (;;) {
		size_t n = strcspn(p, ",");
		int found = -1;

		for (int i = 0; names[i] && i < 64; i++)
			if (strlen(names[i]) == n && strncmp(p, names[i], n) == 0)
				found = i;
		if (found < 0 || (m & (1ull << found))) {
			if (bad)
				*bad = p;
			return -1;
		}
		m |= 1ull << found;
		p += n;
		if (!*p)
			break;
		p++;            /* "a," (trailing comma) fails on the empty name */
	}
	*mask = m;
	return 0;
}

const char *fmt_size(uint64_t v, char *buf, int size)
{
	static const char suf[] = "KMGT";
	int i = -1;

	while (v && v % 1024 == 0 && i < 3) {
		v /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, (size_t)size, "%" PRIu64, v);
	else
		snprintf(buf, (size_t)size, "%" PRIu64 "%c", v, suf[i]);
	return buf;
}

int opt_seterr(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -1;
}

const char *opt_refused(char *const *argv, int before, char *buf, size_t len)
{
	/* optind stays on a cluster until its last character is taken */
	int i = optind == (before ? before : 1) ? optind : optind - 1;

	if (!strncmp(argv[i], "--", 2))
		return argv[i];
	snprintf(buf, len, "-%c", optopt > 0 && optopt < 128 ? optopt : '?');
	return buf;
}
