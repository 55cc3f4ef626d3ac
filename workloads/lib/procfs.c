// SPDX-License-Identifier: GPL-2.0
/* /proc and /sys parsers, see procfs.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"

void kvlist_free(struct kvlist *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int kv_add(struct kvlist *l, const char *name, size_t nlen, uint64_t v)
{
	if (nlen == 0 || nlen >= sizeof(l->v[0].name))
		return -1;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct kv *nv = realloc(l->v, cap * sizeof(*nv));

		if (!nv)
			return -1;
		l->v = nv;
		l->cap = cap;
	}
	memcpy(l->v[l->n].name, name, nlen);
	l->v[l->n].name[nlen] = 0;
	l->v[l->n].val = v;
	l->n++;
	return 0;
}

/* One line "name<sep> value [kB]".  Returns 0, 1 for blank, -1 malformed. */
static int parse_kv_line(char *line, struct kvlist *l, int meminfo)
{
	char *p = line, *name = line, *end;

	while (*p && !isspace((unsigned char)*p) && *p != ':')
		p++;
	size_t nlen = (size_t)(p - name);

	if (nlen == 0)
		return *p == 0 || *p == '\n' ? 1 : -1;
	if (meminfo) {
		if (*p != ':')
			return -1;
		p++;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 10);

	if (errno)
		return -1;
	p = end;
	while (*p == ' ' || *p == '\t')
		p++;
	if (meminfo && strncmp(p, "kB", 2) == 0) {
		v *= 1024;
		p += 2;
	}
	if (*p && *p != '\n')
		return -1;
	return kv_add(l, name, nlen, v);
}

static int parse_kv(FILE *f, struct kvlist *l, int meminfo)
{
	char line[512];

	l->n = 0;
	while (fgets(line, sizeof(line), f))
		if (parse_kv_line(line, l, meminfo) < 0)
			return -1;
	return ferror(f) ? -1 : 0;
}

int meminfo_parse(FILE *f, struct kvlist *l) { return parse_kv(f, l, 1); }
int vmstat_parse(FILE *f, struct kvlist *l) { return parse_kv(f, l, 0); }

static int read_with(const char *path, struct kvlist *l,
		     int (*fn)(FILE *, struct kvlist *))
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	int r = fn(f, l);

	fclose(f);
	return r;
}

int meminfo_read(struct kvlist *l) { return read_with("/proc/meminfo", l, meminfo_parse); }
int vmstat_read(struct kvlist *l) { return read_with("/proc/vmstat", l, vmstat_parse); }

uint64_t kv_get(const struct kvlist *l, const char *name, bool *found)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0) {
			if (found)
				*found = true;
			return l->v[i].val;
		}
	if (found)
		*found = false;
	return 0;
}

static bool always_reported(const char *name)
{
	return strstr(name, "htlb") || strstr(name, "hugetlb") ||
	       strncmp(name, "thp", 3) == 0;
}

void vmstat_delta_json(struct json *j, const struct kvlist *before,
		       const struct kvlist *after)
{
	json_obj_begin(j);
	for (size_t i = 0; i < after->n; i++) {
		const struct kv *a = &after->v[i];
		uint64_t b = kv_get(before, a->name, NULL);

		if (a->val != b || always_reported(a->name))
			json_kv_int(j, a->name, (int64_t)(a->val - b));
	}
	json_obj_end(j);
}

int64_t status_vmpte_parse(FILE *f)
{
	char line[256];

	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;

		if (sscanf(line, "VmPTE: %llu kB", &kb) == 1)
			return (int64_t)kb * 1024;
	}
	return -1;
}

int64_t status_vmpte_read(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	int64_t r = status_vmpte_parse(f);

	fclose(f);
	return r;
}

bool cpuinfo_has_flag(FILE *f, const char *flag)
{
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	size_t fl = strlen(flag);

	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		char *p = strchr(line, ':');

		while (p && *p) {
			p++;
			while (*p == ' ' || *p == '\t')
				p++;
			size_t n = strcspn(p, " \t\n");

			if (n == fl && strncmp(p, flag, n) == 0) {
				found = true;
				break;
			}
			p += n;
			if (!*p || *p == '\n')
				break;
		}
		break;          /* first CPU's flags only */
	}
	free(line);
	return found;
}

bool cpu_has_flag(const char *flag)
{
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (!f)
		return false;
	bool r = cpuinfo_has_flag(f, flag);

	fclose(f);
	return r;
}

uint64_t hp_dirname_size(const char *name)
{
	char *end;

	if (strncmp(name, "hugepages-", 10) != 0 || !isdigit((unsigned char)name[10]))
		return 0;
	unsigned long long kb = strtoull(name + 10, &end, 10);

	if (strcmp(end, "kB") != 0)
		return 0;
	return kb * 1024;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int hp_sizes(const char *root, uint64_t *sizes, int max)
{
	DIR *d = opendir(root);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) && n < max) {
		uint64_t s = hp_dirname_size(e->d_name);

		if (s)
			sizes[n++] = s;
	}
	closedir(d);
	qsort(sizes, (size_t)n, sizeof(*sizes), cmp_u64);
	return n;
}

static int read_u64_file(const char *path, uint64_t *v)
{
	char buf[64], *end;

	if (read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	return errno || end == buf ? -1 : 0;
}

int hp_read(const char *root, uint64_t size, struct hp_counts *c)
{
	static const char *const names[] = {
		"nr_hugepages", "free_hugepages", "resv_hugepages",
		"surplus_hugepages",
	};
	uint64_t *dst[] = { &c->nr, &c->free, &c->rsvd, &c->surp };
	char path[512];

	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/hugepages-%" PRIu64 "kB/%s",
			 root, size / 1024, names[i]);
		if (read_u64_file(path, dst[i]))
			return -1;
	}
	return 0;
}

void hp_json(struct json *j, const char *root)
{
	uint64_t sizes[8];
	int n = hp_sizes(root, sizes, 8);

	json_obj_begin(j);
	for (int i = 0; i < n; i++) {
		struct hp_counts c;
		char k[32];

		if (hp_read(root, sizes[i], &c))
			continue;
		snprintf(k, sizeof(k), "%" PRIu64, sizes[i]);
		json_key(j, k);
		json_obj_begin(j);
		json_kv_uint(j, "nr", c.nr);
		json_kv_uint(j, "free", c.free);
		json_kv_uint(j, "rsvd", c.rsvd);
		json_kv_uint(j, "surp", c.surp);
		json_obj_end(j);
	}
	json_obj_end(j);
}

ssize_t read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, tot = 0;

	if (fd < 0 || size == 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((size_t)tot < size - 1 &&
	       (n = read(fd, buf + tot, size - 1 - (size_t)tot)) > 0)
		tot += n;
	close(fd);
	buf[tot] = 0;
	while (tot > 0 && (buf[tot - 1] == '\n' || buf[tot - 1] == ' '))
		buf[--tot] = 0;
	return tot;
}

const char *sysfs_selected_word(char *text)
{
	char *l = strchr(text, '['), *r;

	if (l && (r = strchr(l, ']'))) {
		*r = 0;
		return l + 1;
	}
	while (isspace((unsigned char)*text))
		text++;
	if (!*text)
		return NULL;
	text[strcspn(text, " \t\n")] = 0;
	return text;
}

void envelope_kernel_json(struct json *j)
{
	struct utsname u;
	char buf[4096];

	uname(&u);
	json_key(j, "kernel");
	json_obj_begin(j);
	json_kv_str(j, "release", u.release);
	json_kv_str(j, "version", u.version);
	json_kv_str(j, "cmdline",
		    read_text("/proc/cmdline", buf, sizeof(buf)) >= 0 ? buf : NULL);
	if (read_text(HUGETLB_FAULT_LOCK_PATH, buf, sizeof(buf)) >= 0)
		json_kv_str(j, "hugetlb_fault_lock", sysfs_selected_word(buf));
	else
		json_kv_null(j, "hugetlb_fault_lock");
	json_obj_end(j);
}

void envelope_machine_json(struct json *j)
{
	struct kvlist m = { 0 };

	json_key(j, "machine");
	json_obj_begin(j);
	json_kv_int(j, "cpus", sysconf(_SC_NPROCESSORS_ONLN));
	if (meminfo_read(&m) == 0)
		json_kv_uint(j, "mem_total", kv_get(&m, "MemTotal", NULL));
	else
		json_kv_null(j, "mem_total");
	kvlist_free(&m);
	json_key(j, "hugepages");
	hp_json(j, HP_SYSFS);
	json_obj_end(j);
}

void utc_now_iso(char *buf, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void hp_counts_json(struct json *j, const char *k, const struct hp_counts *c)
{
	json_key(j, k);
	json_obj_begin(j);
	json_kv_uint(j, "free", c->free);
	json_kv_uint(j, "nr", c->nr);
	json_kv_uint(j, "rsvd", c->rsvd);
	json_kv_uint(j, "surp", c->surp);
	json_obj_end(j);
}

uint64_t meminfo_once(const char *key)
{
	struct kvlist m = { 0 };
	uint64_t v = 0;

	if (meminfo_read(&m) == 0)
		v = kv_get(&m, key, NULL);
	kvlist_free(&m);
	return v;
}

void hp_run_json(struct json *j, int n, const uint64_t *size,
		 const struct hp_counts *before, const struct hp_counts *after,
		 const bool *returned)
{
	char b[32];

	json_key(j, "hugepages");
	json_obj_begin(j);
	for (int i = 0; i < n; i++) {
		snprintf(b, sizeof(b), "%" PRIu64, size[i]);
		json_key(j, b);
		json_obj_begin(j);
		hp_counts_json(j, "before", &before[i]);
		hp_counts_json(j, "after", &after[i]);
		json_kv_bool(j, "returned", returned[i]);
		json_obj_end(j);
	}
	json_obj_end(j);
}

void pids_limit_describe(FILE *proc_cgroup, const char *cgroot, char *buf,
			 size_t size)
{
	char line[512], path[1024], cur[32], max[32];
	size_t n;

	buf[0] = '\0';
	if (!proc_cgroup || !fgets(line, sizeof(line), proc_cgroup) ||
	    strncmp(line, "0::", 3))
		return;
	n = strcspn(line + 3, "\n");
	line[3 + n] = '\0';
	snprintf(path, sizeof(path), "%s%s/pids.max", cgroot, line + 3);
	if (read_text(path, max, sizeof(max)) < 0)
		return;
	snprintf(path, sizeof(path), "%s%s/pids.current", cgroot, line + 3);
	if (read_text(path, cur, sizeof(cur)) < 0)
		snprintf(cur, sizeof(cur), "?");
	snprintf(buf, size, " (cgroup %s: pids.current %s, pids.max %s)",
		 line + 3, cur, max);
}

void pids_limit_read(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/cgroup", "re");

	pids_limit_describe(f, "/sys/fs/cgroup", buf, size);
	if (f)
		fclose(f);
}
