// SPDX-License-Identifier: GPL-2.0
/*
 * forktouch options: shmdb's segment options, through shmdb's own parser
 * and checks (lib/segopts.c), minus what has no meaning for a bare
 * fork-and-touch (transactions, disruptor).  No side effects; unit-tested
 * (tests/test_forktouch_options.c).
 */
#include <string.h>

#include "forktouch.h"
#include "opts.h"

const char *const ft_options[] = {
	"backing", "page-size", "size", "placement", "touch", "map", "sessions",
	"attach", "address", "hugetlbfs-dir", "no-populate", "no-prefault",
	"out", "quiet", "teardown-timeout-s", "check", "guest-shape", "help",
	NULL,
};

void ft_usage(FILE *f)
{
	fputs(
"usage: forktouch [options]   (the bare baseline of shmdb's attach phase)\n"
"  forks --sessions N processes that attach (or inherit) the segment and\n"
"  fault its pages once, as shmdb's sessions do, with nothing else; writes\n"
"  hugelab.forktouch/1 JSON (workloads/SCHEMA.md)\n"
"  shmdb's segment options, same meaning and defaults (shmdb --help):\n"
"  --backing --page-size --size --placement --touch --map --sessions --attach\n"
"  --address --hugetlbfs-dir --no-populate --no-prefault --out --quiet\n"
"  --teardown-timeout-s --check [--guest-shape ...] --help\n", f);
}

static bool taken(const char *arg)
{
	size_t n = strcspn(arg + 2, "=");

	for (int i = 0; ft_options[i]; i++)
		if (strlen(ft_options[i]) == n && !strncmp(arg + 2, ft_options[i], n))
			return true;
	return false;
}

int ft_parse(int argc, char **argv, struct cfg *c, char *err, size_t errlen)
{
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) || !argv[i][2])
			continue;       /* a value, or "--": shmdb's parser says */
		if (!taken(argv[i]))
			BAD("%.*s: not a forktouch option (it takes shmdb's segment options: see --help)",
			    (int)strcspn(argv[i], "="), argv[i]);
		/* the value of an option that takes one is never an option */
		if (!strchr(argv[i], '=') && i + 1 < argc &&
		    strcmp(argv[i], "--no-populate") && strcmp(argv[i], "--no-prefault") &&
		    strcmp(argv[i], "--quiet") && strcmp(argv[i], "--check") &&
		    strcmp(argv[i], "--help"))
			i++;
	}
	if (cfg_parse(argc, argv, c, err, errlen))
		return -1;
	c->write_pct = 0;       /* no transactions (--map private needs 0) */
	return cfg_validate(c, err, errlen);
}
