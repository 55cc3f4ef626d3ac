// SPDX-License-Identifier: GPL-2.0
/*
 * racer options: parsing, input checks and what a run needs.  No side
 * effects (no mapping, fork or file), so a real run and --check take the
 * same path and tests/test_racer_options.c drives it directly.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "opts.h"
#include "racer.h"
#include "tag.h"



void racer_usage(FILE *f)
{
	fprintf(f,
"usage: racer [options]\n"
"  --duration S      seconds of racing (default 60)\n"
"  --procs N         worker processes (default 4)\n"
"  --threads N       threads per worker process (default 2)\n"
"  --size SIZE       file and mapping size, e.g. 1G (default 1G); the pool\n"
"                    needs size/page-size free pages, + 4 (2M) or + 1 (1G)\n"
"                    with punch\n"
"  --page-size SIZE  huge page size 2M or 1G (default 2M)\n"
"  --ops LIST        unshare operations: dontneed,mprotect,munmap,punch\n"
"                    (default all; \"none\" for none; an empty list is\n"
"                    refused)\n"
"  --write-pct N     percent of worker accesses that re-tag (default 20)\n"
"  --path DIR        hugetlbfs mount (of --page-size) for the file\n"
"                    (default: memfd)\n"
"  --addr ADDR       mapping address, 1 GiB aligned, 0x hex or decimal, from\n"
"                    4 GiB; the file ends by 512 GiB (default 0x4000000000)\n"
"  --seed N          random seed (default 1)\n"
"  --inject-errors N self-test: plant N stale tags the checker must report\n"
"                    (the run then fails with N tag errors)\n"
"  --json FILE       write the result document to FILE (default stdout)\n"
"  --teardown-timeout-s S  bound of the wait for the children after the\n"
"                    stop (default 60); then the JSON names the stuck ones\n"
"  --check [--guest-shape mem_mib=M,hugepages_2m=N,hugepages_1g=K,vcpus=V]\n"
"                    validate the options, print what the run needs as\n"
"                    JSON (README.md); nothing runs\n"
"Exit status: 0 ok, 1 check failed, 2 usage or setup error, 128+N signal N.\n");
}


static const struct option long_opts[] = {
	{ "duration", required_argument, NULL, 'd' },
	{ "procs", required_argument, NULL, 'p' },
	{ "threads", required_argument, NULL, 't' },
	{ "size", required_argument, NULL, 's' },
	{ "page-size", required_argument, NULL, 'P' },
	{ "ops", required_argument, NULL, 'o' },
	{ "write-pct", required_argument, NULL, 'w' },
	{ "path", required_argument, NULL, 'D' },
	{ "addr", required_argument, NULL, 'a' },
	{ "seed", required_argument, NULL, 'S' },
	{ "inject-errors", required_argument, NULL, 'I' },
	{ "json", required_argument, NULL, 'j' },
	{ "teardown-timeout-s", required_argument, NULL, 'T' },
	{ "check", no_argument, NULL, 'C' },
	{ "guest-shape", required_argument, NULL, 'G' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 }
};

/*
 * Option c's value into r: 0, or non-zero with *what (the values it takes)
 * for "--NAME: bad value"; -1 with err for a message of its own.
 */
static int racer_opt(struct racer *r, int c, char *arg, const char **what,
		     char *err, size_t errlen)
{
	const char *bad;

	switch (c) {
	case 'd': *what = "an integer in [1, 86400]"; return parse_u64(arg, 1, 86400, &r->duration_s);
	case 'p': *what = "an integer in [1, 512]"; return parse_u64(arg, 1, 512, &r->procs);
	case 't': *what = "an integer in [1, 64]"; return parse_u64(arg, 1, 64, &r->threads);
	case 's': *what = "a size such as 1G"; return parse_size(arg, &r->size);
	case 'P': *what = "2M or 1G"; return parse_size(arg, &r->page_size);
	case 'o':
		*what = "a list of dontneed,mprotect,munmap,punch or none";
		return parse_list(arg, op_names, &r->ops, &bad);
	case 'w': *what = "an integer in [0, 100]"; return parse_u64(arg, 0, 100, &r->write_pct);
	case 'a':
		*what = "0x and hex digits, or decimal without a leading 0";
		return parse_addr(arg, &r->addr);
	case 'S': *what = "a decimal integer"; return parse_u64(arg, 0, UINT64_MAX, &r->seed);
	case 'I': *what = "an integer in [0, 1000]"; return parse_u64(arg, 0, 1000, &r->inject);
	case 'T': *what = "an integer in [1, 3600]"; return parse_u64(arg, 1, 3600, &r->teardown_s);
	case 'j':
		/* a run could not open it; --check must say so too */
		if (!*arg)
			BAD("--json: empty path (a file name, or - for stdout)");
		r->json = arg;
		return 0;
	case 'D': r->path = arg; return 0;
	case 'G': r->guest_shape = arg; return 0;
	case 'C': r->check = true; return 0;
	case 'h': r->help = true; return 0;
	}
	return 0;
}

int racer_parse(int argc, char **argv, struct racer *r, char *err, size_t errlen)
{
	char sbuf[8];
	int c, before = 0;

	*r = (struct racer){ .size = 1ull << 30, .page_size = 2ull << 20,
		.addr = 0x4000000000ull, .ops = RACER_OPS, .seed = 1,
		.duration_s = 60, .procs = 4, .threads = 2, .write_pct = 20,
		.teardown_s = 60, .fd = -1 };
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		const char *what = NULL;

		if (c == ':')
			BAD("option %s needs a value (see --help)",
			    opt_refused(argv, before, sbuf, sizeof(sbuf)));
		if (c == '?')
			BAD("unknown option %s (see --help)",
			    opt_refused(argv, before, sbuf, sizeof(sbuf)));
		if (racer_opt(r, c, optarg, &what, err, errlen)) {
			for (const struct option *o = long_opts; what && o->name; o++)
				if (o->val == c)
					BAD("--%s: bad value '%s' (%s)", o->name, optarg, what);
			return -1;
		}
		before = optind;
	}
	if (r->ops & ~(uint64_t)RACER_OPS)
		BAD("--ops: truncate changes the file size; racer runs dontneed,mprotect,munmap,punch");
	if (optind != argc)
		BAD("unexpected argument '%s' (see --help)", argv[optind]);
	return 0;
}

int racer_validate(const struct racer *r, char *err, size_t errlen)
{
	if (r->guest_shape && !r->check)
		BAD("--guest-shape is only valid with --check");
	if (r->page_size != (2ull << 20) && r->page_size != (1ull << 30))
		BAD("--page-size must be 2M or 1G");
	if (r->size == 0 || r->size % r->page_size || r->size > TAG_MAX_FILE)
		BAD("--size must be a positive multiple of --page-size, at most 64G");
	if (r->addr < RACER_MIN_ADDR || r->addr >= RACER_MAX_END || r->addr % (1ull << 30))
		BAD("--addr %#" PRIx64 ": must be 1 GiB aligned, from 0x100000000 (4 GiB) and below 0x8000000000 (512 GiB)",
		    r->addr);
	if (r->size > RACER_MAX_END - r->addr)
		BAD("--size at --addr %#" PRIx64 ": the file must end by 0x8000000000 (512 GiB)", r->addr);
	if (r->procs + NOPS > RACER_MAX_CHILDREN)
		BAD("--procs: too many processes");
	return 0;
}

void racer_needs(const struct racer *r, struct needs *n)
{
	struct model_res m;
	uint64_t pages = r->size / r->page_size, procs;
	/* every worker and unsharer maps the whole file; count it unshared */
	struct model_cfg mc = { r->size, r->page_size, r->addr, 0, false, true };

	memset(n, 0, sizeof(*n));
	/* A punched page can stay allocated while its index faults again:
	 * punch needs one punch range of slack (up to 4 pages, 1 for 1G). */
	if (r->ops & (1u << OP_PUNCH))
		pages += r->page_size >= (1ull << 30) ? 1 : 4;
	if (r->page_size == (1ull << 30))
		n->hugepages_1g = pages;
	else
		n->hugepages_2m = pages;
	procs = r->procs + (uint64_t)__builtin_popcountll(r->ops);
	mc.sessions = procs;
	model_compute(&mc, &m);
	n->mem_mib = (m.memory_bytes + procs * (RACER_PROC_COST_KIB * 1024 +
						  r->threads * RACER_THREAD_COST_KIB * 1024) +
		      (r->size / r->page_size) * sizeof(struct page_ctl) +
		      RACER_PARENT_COST_MIB * (1ull << 20) + (1ull << 20) - 1) >> 20;
	n->processes = 1 + procs;
}

void racer_needs_opts(const struct racer *r, char *buf, size_t len)
{
	char b1[32], b2[32];

	snprintf(buf, len, "--size %s --page-size %s --procs %" PRIu64 " --threads %" PRIu64,
		 fmt_size(r->size, b1, sizeof(b1)), fmt_size(r->page_size, b2, sizeof(b2)),
		 r->procs, r->threads);
}
