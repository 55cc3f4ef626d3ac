// SPDX-License-Identifier: GPL-2.0
/*
 * shmdb options: parsing, input checks, what a run needs, and the comparison
 * of those needs with a machine (this host for a run, a guest shape for
 * --check).  No function here maps, forks or writes files: a real run and
 * --check go through the same code, and the unit tests
 * (tests/test_shmdb_options.c) drive it directly.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "model.h"
#include "opts.h"
#include "segment.h"

const char *const backing_names[] = { "shm", "hugetlbfs", "memfd", "anon", NULL };
const char *const attach_names[] = { "fork", "attach", NULL };
const char *const placement_names[] = { "aligned", "skewed", NULL };
const char *const touch_names[] = { "all", "sparse", NULL };
const char *const map_names[] = { "shared", "private", NULL };

#define G (1ull << 30)
#define MIB (1ull << 20)


void cfg_usage(FILE *f)
{
	fputs(
"usage: shmdb [options]\n"
"  --backing shm|hugetlbfs|memfd|anon  segment type (default shm; anon = shared\n"
"                                      anonymous, fork only)\n"
"  --page-size 4K|2M|1G                page size (default 2M)\n"
"  --size SIZE                         segment size (default 1G)\n"
"  --placement aligned|skewed          1 GiB-aligned address, or +2 MiB (default aligned)\n"
"  --touch all|sparse                  fault every page (default), or one 2 MiB page\n"
"                                      per 1 GiB slot the segment spans, mapped\n"
"                                      MAP_NORESERVE: the page tables of the whole\n"
"                                      segment from a pool of one page per GiB\n"
"                                      (e.g. --size 1T: 1024 pages); 2M pages only\n"
"  --map shared|private                MAP_SHARED (default), or MAP_PRIVATE of the\n"
"                                      file: no PMD sharing at any placement (the\n"
"                                      unshared reference); sessions fault by\n"
"                                      reading; hugetlbfs or memfd, --write-pct 0\n"
"  --sessions N                        session processes (default 100)\n"
"  --active N                          only N sessions run transactions; the\n"
"                                      others map and fault the segment, then\n"
"                                      sleep (default 0 = all)\n"
"  --attach fork|attach                inherit the mapping, or attach in each session\n"
"  --duration S | --duration-ms MS     run time (default 5 s; 0 = until --txn-count)\n"
"  --txn-count N                       transactions per session (default 0 = unlimited)\n"
"  --write-pct P                       percent of update transactions (default 20)\n"
"  --buffer-size SIZE                  buffer (power of two, default 8K)\n"
"  --disrupt LIST                      punch,truncate,mprotect,munmap,dontneed\n"
"  --disrupt-interval-ms MS            pause between operations (default 100)\n"
"  --disrupt-len SIZE                  range per operation (default max(page, 2M))\n"
"  --disrupt-once                      each range at most once (the segment's ranges\n"
"                                      in a random order; truncate: the tail, once),\n"
"                                      then no more operations: every operation\n"
"                                      finds its range mapped by every session\n"
"  --seed N                            random seed (default 1)\n"
"  --address ADDR                      1 GiB-aligned address, 0x hex or decimal, from\n"
"                                      4 GiB; the segment ends by 32 TiB\n"
"                                      (default 0x2000000000)\n"
"  --hugetlbfs-dir DIR                 hugetlbfs mount, --backing hugetlbfs only\n"
"                                      (default: find or mount one)\n"
"  --no-populate                       4K: touch pages instead of MADV_POPULATE_READ\n"
"  --no-prefault                       sessions allocate (zero) the pages themselves\n"
"  --count-faults                      record the latency of first accesses that\n"
"                                      page-faulted (ru_minflt) separately\n"
"  --attribute                         with --count-faults: for each fault of 10 ms\n"
"                                      or more, its run-queue wait, its lock waits\n"
"                                      per lock (tracefs lock:contention_*) and the\n"
"                                      disruptor operation (README.md)\n"
"  --out FILE                          JSON output (default stdout)\n"
"  --teardown-timeout-s S              bound of every teardown wait (default 60);\n"
"                                      then the JSON names the stuck processes\n"
"  --quiet                             no progress lines on stderr\n"
"  --check [--guest-shape mem_mib=M,hugepages_2m=N,hugepages_1g=K,vcpus=V]\n"
"                                      validate the options, print what the run\n"
"                                      needs as JSON (README.md); nothing runs\n", f);
}


void cfg_defaults(struct cfg *c)
{
	*c = (struct cfg){
		.backing = B_SHM, .page_size = 2ull << 20, .size = 1ull << 30,
		.sessions = 100, .attach = A_FORK, .duration_ms = 5000,
		.write_pct = 20, .buffer_size = 8192, .disrupt_interval_ms = 100,
		.seed = 1, .base = DEFAULT_BASE, .populate = true, .prefault = true,
		.teardown_timeout_s = 60,
	};
}

static int opt_size(const char *name, const char *v, uint64_t *x, char *err,
		    size_t errlen)
{
	if (parse_size(v, x))
		BAD("--%s: invalid size '%s' (e.g. 4096, 4K, 2M, 1G)", name, v);
	return 0;
}

static int opt_u64(const char *name, const char *v, uint64_t min, uint64_t max,
		   uint64_t *x, char *err, size_t errlen)
{
	if (parse_u64(v, min, max, x))
		BAD("--%s: '%s' is not an integer in [%" PRIu64 ", %" PRIu64 "]",
		    name, v, min, max);
	return 0;
}

static int opt_choice(const char *name, const char *v, const char *const *names,
		      int *x, char *err, size_t errlen)
{
	char allowed[128] = "";

	if ((*x = parse_choice(v, names)) >= 0)
		return 0;
	for (int i = 0; names[i]; i++)
		snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed),
			 "%s%s", i ? ", " : "", names[i]);
	BAD("--%s: unknown value '%s' (%s)", name, v, allowed);
}

enum { O_BACKING = 256, O_PAGE, O_SIZE, O_PLACE, O_SESS, O_ATTACH,
       O_DUR, O_DURMS, O_TXN, O_WPCT, O_BUF, O_DIS, O_DISINT, O_DISLEN,
       O_SEED, O_ACTIVE, O_ADDR, O_HDIR, O_NOPOP, O_NOPRE, O_CNTF, O_OUT,
       O_QUIET, O_HELP, O_TEARDOWN, O_CHECK, O_SHAPE, O_TOUCH, O_MAP,
       O_ATTR, O_DISONCE };

static const struct option long_opts[] = {
	{ "backing", 1, NULL, O_BACKING }, { "page-size", 1, NULL, O_PAGE },
	{ "size", 1, NULL, O_SIZE }, { "placement", 1, NULL, O_PLACE },
	{ "touch", 1, NULL, O_TOUCH }, { "map", 1, NULL, O_MAP },
	{ "sessions", 1, NULL, O_SESS }, { "active", 1, NULL, O_ACTIVE },
	{ "attach", 1, NULL, O_ATTACH },
	{ "duration", 1, NULL, O_DUR }, { "duration-ms", 1, NULL, O_DURMS },
	{ "txn-count", 1, NULL, O_TXN }, { "write-pct", 1, NULL, O_WPCT },
	{ "buffer-size", 1, NULL, O_BUF }, { "disrupt", 1, NULL, O_DIS },
	{ "disrupt-interval-ms", 1, NULL, O_DISINT },
	{ "disrupt-len", 1, NULL, O_DISLEN }, { "seed", 1, NULL, O_SEED },
	{ "disrupt-once", 0, NULL, O_DISONCE },
	{ "address", 1, NULL, O_ADDR }, { "hugetlbfs-dir", 1, NULL, O_HDIR },
	{ "no-populate", 0, NULL, O_NOPOP },
	{ "no-prefault", 0, NULL, O_NOPRE },
	{ "count-faults", 0, NULL, O_CNTF }, { "attribute", 0, NULL, O_ATTR },
	{ "out", 1, NULL, O_OUT },
	{ "quiet", 0, NULL, O_QUIET }, { "help", 0, NULL, O_HELP },
	{ "teardown-timeout-s", 1, NULL, O_TEARDOWN },
	{ "check", 0, NULL, O_CHECK }, { "guest-shape", 1, NULL, O_SHAPE },
	{ NULL, 0, NULL, 0 },
};

/* Integer options: name, range, field. */
static const struct {
	int o;
	const char *name;
	uint64_t min, max;
	size_t off;
} u64_opts[] = {
	{ O_SESS, "sessions", 1, 100000, offsetof(struct cfg, sessions) },
	{ O_ACTIVE, "active", 0, 100000, offsetof(struct cfg, active) },
	{ O_DURMS, "duration-ms", 0, 86400000, offsetof(struct cfg, duration_ms) },
	{ O_TXN, "txn-count", 0, UINT32_MAX, offsetof(struct cfg, txn_count) },
	{ O_WPCT, "write-pct", 0, 100, offsetof(struct cfg, write_pct) },
	{ O_DISINT, "disrupt-interval-ms", 0, 3600000, offsetof(struct cfg, disrupt_interval_ms) },
	{ O_SEED, "seed", 0, UINT64_MAX, offsetof(struct cfg, seed) },
	{ O_TEARDOWN, "teardown-timeout-s", 1, 3600, offsetof(struct cfg, teardown_timeout_s) },
	{ O_PAGE, "page-size", 0, 0, offsetof(struct cfg, page_size) },         /* sizes: max 0 */
	{ O_SIZE, "size", 0, 0, offsetof(struct cfg, size) },
	{ O_BUF, "buffer-size", 0, 0, offsetof(struct cfg, buffer_size) },
	{ O_DISLEN, "disrupt-len", 0, 0, offsetof(struct cfg, disrupt_len) },
};

/* Options without a value: the field they set (to true, or false for --no-*). */
static const struct {
	int o;
	size_t off;
	bool v;
} flag_opts[] = {
	{ O_NOPOP, offsetof(struct cfg, populate), false },
	{ O_NOPRE, offsetof(struct cfg, prefault), false },
	{ O_CNTF, offsetof(struct cfg, count_faults), true },
	{ O_ATTR, offsetof(struct cfg, attribute), true },
	{ O_DISONCE, offsetof(struct cfg, disrupt_once), true },
	{ O_QUIET, offsetof(struct cfg, quiet), true },
	{ O_CHECK, offsetof(struct cfg, check), true },
	{ O_HELP, offsetof(struct cfg, help), true },
};

/* An integer, size or flag option: 1 taken, 0 not one of those, -1 bad value. */
static int table_opt(struct cfg *c, int o, const char *arg, char *err, size_t errlen)
{
	char *base = (char *)c;

	for (size_t i = 0; i < sizeof(u64_opts) / sizeof(u64_opts[0]); i++) {
		uint64_t *x = (uint64_t *)(base + u64_opts[i].off);

		if (u64_opts[i].o != o)
			continue;
		if (u64_opts[i].max)
			return opt_u64(u64_opts[i].name, arg, u64_opts[i].min, u64_opts[i].max,
				       x, err, errlen) ? -1 : 1;
		return opt_size(u64_opts[i].name, arg, x, err, errlen) ? -1 : 1;
	}
	for (size_t i = 0; i < sizeof(flag_opts) / sizeof(flag_opts[0]); i++)
		if (flag_opts[i].o == o) {
			*(bool *)(base + flag_opts[i].off) = flag_opts[i].v;
			return 1;
		}
	return 0;
}

/* The options with a list of values: 0, or -1 with err. */
static int choice_opt(struct cfg *c, int o, const char *arg, char *err, size_t errlen)
{
	int i = 0, e = 0;

	switch (o) {
	case O_BACKING:
		e = opt_choice("backing", arg, backing_names, &i, err, errlen);
		c->backing = (enum backing)i;
		break;
	case O_ATTACH:
		e = opt_choice("attach", arg, attach_names, &i, err, errlen);
		c->attach = (enum attach_mode)i;
		break;
	case O_PLACE: e = opt_choice("placement", arg, placement_names, &c->skewed, err, errlen); break;
	case O_TOUCH: e = opt_choice("touch", arg, touch_names, &c->sparse, err, errlen); break;
	case O_MAP: e = opt_choice("map", arg, map_names, &c->priv, err, errlen); break;
	case O_DIS: {
		const char *bad_name;

		if (!*arg)
			BAD("--disrupt: empty list (%s or none)", "punch,truncate,mprotect,munmap,dontneed");
		if (parse_list(arg, op_names, &c->disrupt, &bad_name))
			BAD("--disrupt: unknown or repeated operation at '%s' (punch,truncate,mprotect,munmap,dontneed)",
			    bad_name);
		break;
	}
	}
	return e;
}

/* One option that getopt_long took: 0, or -1 with err. */
static int cfg_opt(struct cfg *c, int o, char *arg, char *err, size_t errlen)
{
	uint64_t v;
	int t = table_opt(c, o, arg, err, errlen);

	if (t)
		return t < 0 ? -1 : 0;
	switch (o) {
	case O_DUR:
		if (opt_u64("duration", arg, 0, 86400, &v, err, errlen))
			return -1;
		c->duration_ms = 1000 * v;
		break;
	case O_ADDR:
		if (parse_addr(arg, &c->base))
			BAD("--address: invalid address '%s' (0x and hex digits, or decimal without a leading 0)",
			    arg);
		break;
	case O_HDIR: c->hugetlbfs_dir = arg; break;
	case O_OUT:
		/* a run could not open it; --check must say so too */
		if (!*arg)
			BAD("--out: empty path (a file name, or - for stdout)");
		c->out = arg;
		break;
	case O_SHAPE: c->guest_shape = arg; break;
	default: return choice_opt(c, o, arg, err, errlen);
	}
	return 0;
}

int cfg_parse(int argc, char **argv, struct cfg *c, char *err, size_t errlen)
{
	char sbuf[8];
	int o, before = 0;

	cfg_defaults(c);
	opterr = 0;
	optind = 0;             /* full re-initialisation (tests parse many times) */
	while ((o = getopt_long(argc, argv, ":", long_opts, NULL)) != -1) {
		if (o == ':')
			BAD("option %s needs a value (see --help)",
			    opt_refused(argv, before, sbuf, sizeof(sbuf)));
		if (o == '?' || o < O_BACKING)
			BAD("unknown option %s (see --help)",
			    opt_refused(argv, before, sbuf, sizeof(sbuf)));
		if (cfg_opt(c, o, optarg, err, errlen))
			return -1;
		if (o == O_DISLEN && !c->disrupt_len)   /* 0 stands for "not given" */
			BAD("--disrupt-len 0: must be positive (leave it out for the default, max(page, 2M))");
		c->duration_set |= o == O_DUR || o == O_DURMS;
		before = optind;
	}
	if (optind < argc)
		BAD("unexpected argument '%s' (see --help)", argv[optind]);
	if (c->txn_count && !c->duration_set)
		c->duration_ms = 0;     /* --txn-count alone: no time limit */
	return 0;
}

/* Page size, size, address: the segment fits below MAX_END. */
static int check_geometry(const struct cfg *c, char *err, size_t errlen)
{
	char b1[32], b2[32];
	uint64_t skew = c->skewed ? 2 * MIB : 0;

	if (c->guest_shape && !c->check)
		BAD("--guest-shape is only valid with --check");
	if (c->page_size != 4096 && c->page_size != (2ull << 20) && c->page_size != G)
		BAD("--page-size %s: only 4K, 2M and 1G are supported",
		    fmt_size(c->page_size, b1, sizeof(b1)));
	if (c->size == 0 || c->size % c->page_size)
		BAD("--size %s: must be a positive multiple of the page size %s",
		    fmt_size(c->size, b1, sizeof(b1)), fmt_size(c->page_size, b2, sizeof(b2)));
	if (c->base < MIN_BASE || c->base >= MAX_END || c->base % G)
		BAD("--address %#" PRIx64 ": must be 1 GiB aligned, from %#llx (4 GiB) and below %#llx (32 TiB)",
		    c->base, MIN_BASE, MAX_END);
	if (c->size > MAX_END - c->base - skew)
		BAD("--size %s at %#" PRIx64 "%s: the segment must end by %#llx (32 TiB): at most %s here",
		    fmt_size(c->size, b1, sizeof(b1)), c->base, c->skewed ? " + 2M (skewed)" : "",
		    MAX_END, fmt_size((MAX_END - c->base - skew) / c->page_size * c->page_size,
				      b2, sizeof(b2)));
	return 0;
}

/* Sessions, placement, buffers. */
static int check_run(const struct cfg *c, char *err, size_t errlen)
{
	char b1[32];

	if (c->active > c->sessions)
		BAD("--active %" PRIu64 ": more than the %" PRIu64 " sessions", c->active, c->sessions);
	if (c->attribute && !c->count_faults)
		BAD("--attribute needs --count-faults (it attributes the faulting first accesses)");
	if (c->active && !c->duration_ms)
		BAD("--active needs a --duration (mappers sleep until the run's end)");
	if (c->skewed && c->page_size == G)
		BAD("--placement skewed needs 2M or 4K pages (a 1G page must be 1 GiB aligned)");
	if (c->buffer_size < 64 || (c->buffer_size & (c->buffer_size - 1)) ||
	    c->buffer_size > c->size)
		BAD("--buffer-size %s: must be a power of two from 64 to the segment size",
		    fmt_size(c->buffer_size, b1, sizeof(b1)));
	return 0;
}

/* --touch sparse and --map private. */
static int check_touch_map(const struct cfg *c, char *err, size_t errlen)
{
	char b1[32];

	if (c->sparse && c->page_size != (2ull << 20))
		BAD("--touch sparse needs --page-size 2M (one 2 MiB page per 1 GiB slot)");
	if (c->sparse && c->disrupt)
		BAD("--touch sparse cannot be disrupted (punch, truncate and the remapping ops act on untouched pages): drop --disrupt");
	if (c->sparse && c->buffer_size > c->page_size)
		BAD("--buffer-size %s: --touch sparse keeps every buffer inside one touched page (at most 2M)",
		    fmt_size(c->buffer_size, b1, sizeof(b1)));
	if (c->priv && !seg_file_backed(c))
		BAD("--map private needs a file to map privately (--backing hugetlbfs or memfd)");
	if (c->priv && c->write_pct)
		BAD("--map private needs --write-pct 0 (a write copies the page out of the pool)");
	if (c->priv && c->disrupt)
		BAD("--map private cannot be disrupted: drop --disrupt");
	if (c->priv && !c->prefault)
		BAD("--map private needs the prefault (a read of a missing page gives each session its own copy): drop --no-prefault");
	return 0;
}

/* The backing against the page size, the attach mode and the disruptions. */
static int check_backing(const struct cfg *c, char *err, size_t errlen)
{
	bool hugetlb = c->page_size != 4096;

	if (c->backing == B_HUGETLBFS && !hugetlb)
		BAD("--backing hugetlbfs needs --page-size 2M or 1G (use memfd or shm for 4K)");
	if (c->hugetlbfs_dir && c->backing != B_HUGETLBFS)
		BAD("--hugetlbfs-dir is only used with --backing hugetlbfs (here: %s)",
		    backing_names[c->backing]);
	if (c->backing == B_ANON && c->attach == A_ATTACH)
		BAD("--backing anon can only be inherited: use --attach fork");
	if (!seg_file_backed(c) && (c->disrupt & ((1ull << OP_PUNCH) | (1ull << OP_TRUNCATE))))
		BAD("--disrupt punch/truncate need a file-backed segment (--backing hugetlbfs or memfd)");
	if (c->backing == B_ANON && (c->disrupt & (1ull << OP_MUNMAP)))
		BAD("--disrupt munmap cannot remap --backing anon; use shm, hugetlbfs or memfd");
	if (!c->duration_ms && !c->txn_count)
		BAD("--duration 0 needs --txn-count");
	return 0;
}

/* --disrupt-len: the default max(page, buffer, 2M) within the segment, or as given. */
static int check_disrupt_len(struct cfg *c, char *err, size_t errlen)
{
	char b1[32], b2[32];
	uint64_t align = c->page_size > c->buffer_size ? c->page_size : c->buffer_size;

	if (!c->disrupt_len) {
		c->disrupt_len = align > (2ull << 20) ? align : (2ull << 20);
		if (c->disrupt_len > c->size)
			c->disrupt_len = c->size;
	}
	if (c->disrupt_len % align || c->disrupt_len > c->size)
		BAD("--disrupt-len %s: must be a multiple of %s and at most the segment size",
		    fmt_size(c->disrupt_len, b1, sizeof(b1)), fmt_size(align, b2, sizeof(b2)));
	if (c->disrupt_once && !c->disrupt)
		BAD("--disrupt-once needs --disrupt");
	if (c->disrupt_once && c->size / c->disrupt_len > DISRUPT_ONCE_MAX_SLOTS)
		BAD("--disrupt-once: %" PRIu64 " ranges of %s; at most %u (a larger --disrupt-len)",
		    c->size / c->disrupt_len, fmt_size(c->disrupt_len, b1, sizeof(b1)),
		    DISRUPT_ONCE_MAX_SLOTS);
	return 0;
}

int cfg_validate(struct cfg *c, char *err, size_t errlen)
{
	if (check_geometry(c, err, errlen) || check_run(c, err, errlen) ||
	    check_touch_map(c, err, errlen) || check_backing(c, err, errlen))
		return -1;
	return check_disrupt_len(c, err, errlen);
}

void cfg_model(const struct cfg *c, uint64_t sessions, bool pud_counted,
	       struct model_res *m)
{
	struct model_cfg mc = {
		.size = c->size, .page_size = c->page_size,
		.start = c->base + (c->skewed ? 2 * MIB : 0),
		.sessions = sessions, .may_share = !c->priv,
		.pud_counted = pud_counted,
	};

	model_compute(&mc, m);
}

void cfg_needs(const struct cfg *c, struct needs *n)
{
	struct model_res m;
	/* sessions + the disruptor map the segment; prefault exits first */
	uint64_t mappers = c->sessions + (c->disrupt ? 1 : 0);
	uint64_t bytes = COORD_COST_MIB * MIB;

	memset(n, 0, sizeof(*n));
	if (c->page_size == (2ull << 20))
		n->hugepages_2m = seg_touch_pages(c);
	else if (c->page_size == G)
		n->hugepages_1g = c->size / c->page_size;
	else
		bytes += c->size;       /* 4 KiB: the segment is ordinary memory */
	/* memory, whatever PageTables counts: PUD pages included */
	cfg_model(c, mappers, true, &m);
	bytes += m.memory_bytes;
	bytes += mappers * SESSION_COST_KIB * 1024;
	bytes += session_buffers(c) * sizeof(uint32_t);        /* ctl->committed */
	n->mem_mib = (bytes + MIB - 1) / MIB;
	n->processes = 1 + mappers;
}

void cfg_needs_opts(const struct cfg *c, char *buf, size_t len)
{
	char b1[32], b2[32];

	snprintf(buf, len, "--size %s --page-size %s%s%s --sessions %" PRIu64 "%s",
		 fmt_size(c->size, b1, sizeof(b1)), fmt_size(c->page_size, b2, sizeof(b2)),
		 c->sparse ? " --touch sparse" : "",
		 c->priv ? " --map private" : "",
		 c->sessions, c->disrupt ? " --disrupt" : "");
}

void seg_config_json(struct json *j, const struct cfg *c)
{
	json_kv_str(j, "backing", backing_names[c->backing]);
	json_kv_uint(j, "page_size", c->page_size);
	json_kv_uint(j, "size", c->size);
	json_kv_str(j, "placement", placement_names[c->skewed]);
	json_kv_str(j, "touch", touch_names[c->sparse]);
	json_kv_str(j, "map", map_names[c->priv]);
	json_kv_uint(j, "touched_pages", seg_touch_pages(c));
	json_kv_uint(j, "sessions", c->sessions);
}
