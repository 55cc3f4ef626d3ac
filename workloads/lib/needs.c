// SPDX-License-Identifier: GPL-2.0
/* Run needs against a machine, see needs.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "needs.h"
#include "opts.h"
#include "procfs.h"


int machine_shape(const char *s, struct machine_res *r, char *err, size_t errlen)
{
	static const char *const keys[] = { "mem_mib", "hugepages_2m", "hugepages_1g",
					    "vcpus", NULL };
	uint64_t v[4] = { 0 };
	unsigned int seen = 0;
	const char *p = s;

	while (p && *p) {
		size_t n = strcspn(p, ","), k = strcspn(p, "=");
		char *val;
		int i, e;

		if (k >= n)
			BAD("--guest-shape: '%.*s' is not key=value (mem_mib=M,hugepages_2m=N,hugepages_1g=K,vcpus=V)",
			    (int)n, p);
		for (i = 0; keys[i]; i++)
			if (strlen(keys[i]) == k && !strncmp(p, keys[i], k))
				break;
		if (!keys[i] || (seen & (1u << i)))
			BAD("--guest-shape: unknown or repeated key '%.*s' (mem_mib, hugepages_2m, hugepages_1g, vcpus)",
			    (int)k, p);
		/* the whole value: leading zeros past 31 characters read as 0 */
		val = strndup(p + k + 1, n - k - 1);
		if (!val)
			BAD("--guest-shape: out of memory");
		e = parse_u64(val, i == 0 || i == 3 ? 1 : 0, 1ull << 40, &v[i]);
		if (e)
			opt_seterr(err, errlen, "--guest-shape: %s='%s' is not an integer in [%d, %llu]",
				   keys[i], val, i == 0 || i == 3 ? 1 : 0, 1ull << 40);
		free(val);
		if (e)
			return -1;
		seen |= 1u << i;
		p += n;
		if (*p && !*++p)
			BAD("--guest-shape: trailing comma in '%s'", s);
	}
	if (seen != 0xf)
		BAD("--guest-shape: needs all of mem_mib, hugepages_2m, hugepages_1g, vcpus");
	memset(r, 0, sizeof(*r));
	r->what = "the guest shape";
	r->hp_free_2m = v[1];
	r->hp_free_1g = v[2];
	r->has_2m = r->has_1g = true;   /* a pool of 0 pages is "too few" */
	r->mem_pool_mib = v[1] * 2 + v[2] * 1024;
	if (r->mem_pool_mib + GUEST_OS_MIB > v[0])
		BAD("--guest-shape: mem_mib=%" PRIu64 " cannot hold its huge page pools (%" PRIu64
		    " MiB) and %d MiB for the guest's own system", v[0], r->mem_pool_mib, GUEST_OS_MIB);
	r->mem_avail_mib = v[0] - r->mem_pool_mib - GUEST_OS_MIB;
	/* the kernel's default pid_max: max(32768, 1024 per CPU) */
	r->pid_max = v[3] * 1024 > 32768 ? v[3] * 1024 : 32768;
	return 0;
}

int needs_fit(const char *opts, const struct needs *n,
	      const struct machine_res *r, char *err, size_t errlen)
{
	if (n->hugepages_2m && !r->has_2m)
		BAD("%s: %s has no 2M huge page pool", opts, r->what);
	if (n->hugepages_1g && !r->has_1g)
		BAD("%s: %s has no 1G huge page pool (or no pdpe1gb)", opts, r->what);
	if (n->hugepages_2m > r->hp_free_2m)
		BAD("%s: needs %" PRIu64 " free 2M huge pages, %s has %" PRIu64,
		    opts, n->hugepages_2m, r->what, r->hp_free_2m);
	if (n->hugepages_1g > r->hp_free_1g)
		BAD("%s: needs %" PRIu64 " free 1G huge pages, %s has %" PRIu64,
		    opts, n->hugepages_1g, r->what, r->hp_free_1g);
	if (n->mem_mib > r->mem_avail_mib)
		BAD("%s: needs %" PRIu64 " MiB of memory (segment, page tables, processes), %s has %" PRIu64
		    " MiB available", opts, n->mem_mib, r->what, r->mem_avail_mib);
	if (r->pid_max && n->processes + SYSTEM_PROCS > r->pid_max)
		BAD("%s: needs %" PRIu64 " processes, %s allows %" PRIu64 " (pid_max, %d kept for the system)",
		    opts, n->processes, r->what, r->pid_max - SYSTEM_PROCS, SYSTEM_PROCS);
	return 0;
}

static bool pool(uint64_t size, uint64_t *usable)
{
	struct hp_counts hc;
	char path[128], buf[64];
	uint64_t over = 0;

	*usable = 0;
	if (hp_read(HP_SYSFS, size, &hc))
		return false;
	snprintf(path, sizeof(path), "%s/hugepages-%" PRIu64 "kB/nr_overcommit_hugepages",
		 HP_SYSFS, size / 1024);
	if (read_text(path, buf, sizeof(buf)) > 0)
		over = strtoull(buf, NULL, 10);
	*usable = hc.free - (hc.rsvd < hc.free ? hc.rsvd : hc.free) +
		  (over > hc.surp ? over - hc.surp : 0);
	return true;
}

int machine_host(struct machine_res *r, char *err, size_t errlen)
{
	struct kvlist m = { 0 };
	char buf[64];
	bool found;

	memset(r, 0, sizeof(*r));
	r->what = "this machine";
	r->has_2m = pool(2ull << 20, &r->hp_free_2m);
	r->has_1g = pool(1ull << 30, &r->hp_free_1g) && cpu_has_flag("pdpe1gb");
	if (meminfo_read(&m))
		BAD("cannot read /proc/meminfo");
	r->mem_avail_mib = kv_get(&m, "MemAvailable", &found) >> 20;
	kvlist_free(&m);
	if (!found)
		BAD("/proc/meminfo has no MemAvailable");
	if (read_text("/proc/sys/kernel/pid_max", buf, sizeof(buf)) > 0)
		r->pid_max = strtoull(buf, NULL, 10);
	return 0;
}

void needs_print_ok(const struct needs *n)
{
	printf("{\"ok\": true, \"needs\": {\"hugepages_2m\": %" PRIu64
	       ", \"hugepages_1g\": %" PRIu64 ", \"mem_mib\": %" PRIu64
	       ", \"processes\": %" PRIu64 "}}\n",
	       n->hugepages_2m, n->hugepages_1g, n->mem_mib, n->processes);
	fflush(stdout);
}
