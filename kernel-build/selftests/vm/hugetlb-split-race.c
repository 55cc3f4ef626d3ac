// SPDX-License-Identifier: GPL-2.0
/*
 * hugetlb-split-race: splitting a hugetlb VMA that shares its PMD page
 * table must not race with other processes' page table walkers.
 *
 * Processes map one MAP_SHARED hugetlb file of 2 MiB pages at the same
 * 1 GiB aligned address, covering whole 1 GiB slots (MAP_NORESERVE, a few
 * pages in each), and fault it, so their PUD entries point to shared PMD
 * tables.  Then, for T seconds:
 *
 *  - faulters read and check a page of every slot, tag again the ones
 *    found punched, and drop their own mapping of a page now and then
 *    (MADV_DONTNEED unshares the table), so they keep sharing the tables
 *    again (huge_pmd_share());
 *  - splitters fault every slot in, then mprotect() or munmap() a page
 *    inside every slot in turn: each call splits the VMA, and the split
 *    unshares the PMD table of a slot the VMA fully covered
 *    (hugetlb_split()); then they map the whole file again;
 *  - punchers punch holes (fallocate(FALLOC_FL_PUNCH_HOLE)) across slot
 *    boundaries, and now and then a tagged page: a hole punch walks every
 *    mapping of the file with i_mmap_rwsem held for write and unshares the
 *    PMD tables it finds.
 *
 * If the split unshares without holding i_mmap_rwsem (6.1.y's
 * __vma_adjust() calls hugetlb_split() before i_mmap_lock_write()), a
 * splitter and a hole punch walking the same mm can both unshare one PUD
 * entry: the table's share count drops below the number of its users and
 * a table still in use is freed.  The kernel then reports "bad pmd",
 * "Bad page cache ... still mapped when deleted" or "non-zero
 * pgtables_bytes on freeing mm", huge pages leak and data read through
 * the mapping is wrong.
 *
 * The test fails when a page holds another page's tag (read through the
 * mapping or with pread()), a process dies of a signal, huge pages are
 * not returned to the pool once the file is gone, or (when /dev/kmsg is
 * readable) the kernel logs one of the messages above, or a warning, BUG
 * or oops naming hugetlb or page table code (kmsg_finding()).  It stops at
 * the first kernel log finding and prints when it was seen.
 *
 * Usage: hugetlb-split-race [-t seconds] [-n faulters] [-T threads]
 *                           [-s splitters] [-p punchers] [-g slots]
 *                           [-f hugetlbfs file]
 *
 * Defaults: 30 s, 3 faulters of 1 thread, 3 splitters, 2 punchers, 8 slots.
 * Needs slots * 9 + 8 free 2 MiB huge pages (80 by default); skips
 * otherwise.  Without -f the file is a memfd (MFD_HUGETLB).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/memfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest.h"

#define HPAGE_SIZE	(2UL << 20)
#define SLOT_SIZE	(HPAGE_SIZE * 512)
#define PER_SLOT	(SLOT_SIZE / HPAGE_SIZE)
/*
 * Each 1 GiB slot holds DATA_PAGES tagged pages in its middle, the rest is
 * a hole: a slot costs few huge pages, but has a PMD table of its own.
 * Punchers punch from HOLE_START of one slot to HOLE_END of the next (so
 * one punch walks two slots of every mapping) and now and then a data
 * page, which faulters fault in and tag again; splitters split the VMA
 * inside the hole of every slot in turn.
 */
#define DATA_FIRST	(PER_SLOT / 2)
#define DATA_PAGES	8
#define HOLE_START	(PER_SLOT * 3 / 4)
#define HOLE_END	(PER_SLOT / 4)
#define MAX_PROCS	256
#define MAX_THREADS	16
#define PUNCH_SLACK	8
#define TAG_MAGIC	0x5d1b000000000000ULL
#define POLL_US		50000
#define TEARDOWN_S	20
#define SPLITTER_OPS	50

enum role { FAULTER, SPLITTER, PUNCHER, NR_ROLES };

static const char * const role_name[NR_ROLES] = {
	"faulter", "splitter", "puncher"
};

struct shared {
	int stop;
	unsigned long ops[NR_ROLES];
	unsigned long bad_reads;
	unsigned long op_errors;
	char first_error[256];
};

static struct shared *sh;
static char *base;
static unsigned long nr_slots = 8;
static unsigned long nr_threads = 1;
static size_t file_size;
static int fd;

static unsigned long long tag(unsigned long idx)
{
	return TAG_MAGIC | idx;
}

static bool stopped(void)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_RELAXED);
}

static void count_op(enum role r)
{
	__atomic_fetch_add(&sh->ops[r], 1, __ATOMIC_RELAXED);
}

static void report(unsigned long *counter, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vsnprintf(sh->first_error, sizeof(sh->first_error), fmt, ap);
	va_end(ap);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long long rnd(unsigned long long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static char *page_addr(unsigned long idx)
{
	return base + idx * HPAGE_SIZE;
}

static unsigned long page_index(unsigned long slot, unsigned long i)
{
	return slot * PER_SLOT + i;
}

/* A word of page @idx: its tag, or 0 when the page was punched. */
static bool word_ok(unsigned long long w, unsigned long idx)
{
	return w == tag(idx) || !w;
}

/* Check the first and last word of a page; tag it again if punched. */
static void check_page(unsigned long idx, const char *who)
{
	unsigned long long *p = (unsigned long long *)page_addr(idx);
	unsigned long long *q = p + HPAGE_SIZE / 8 - 1;
	unsigned long long first = __atomic_load_n(p, __ATOMIC_RELAXED);
	unsigned long long last = __atomic_load_n(q, __ATOMIC_RELAXED);

	if (!word_ok(first, idx) || !word_ok(last, idx)) {
		report(&sh->bad_reads, "%s: page %lu reads %#llx/%#llx, expected %#llx",
		       who, idx, first, last, tag(idx));
		return;
	}
	if (!first)
		__atomic_store_n(p, tag(idx), __ATOMIC_RELAXED);
	if (!last)
		__atomic_store_n(q, tag(idx), __ATOMIC_RELAXED);
}

/* The same through read(): the page cache, no page tables. */
static void check_file(unsigned long idx, const char *who)
{
	unsigned long long w = 0;

	if (pread(fd, &w, sizeof(w), idx * HPAGE_SIZE) != sizeof(w))
		report(&sh->op_errors, "%s: pread: %s", who, strerror(errno));
	else if (!word_ok(w, idx))
		report(&sh->bad_reads, "%s: pread of page %lu reads %#llx, expected %#llx",
		       who, idx, w, tag(idx));
}

static int map_whole(void)
{
	void *p = mmap(base, file_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd, 0);

	return p == MAP_FAILED ? -1 : 0;
}

static unsigned long data_page(unsigned long long *seed, unsigned long slot)
{
	return page_index(slot, DATA_FIRST + rnd(seed) % DATA_PAGES);
}

static void *faulter_thread(void *arg)
{
	unsigned long long seed = *(unsigned long long *)arg;
	unsigned long iter = 0;

	while (!stopped()) {
		unsigned long idx = 0;

		/* Fault in (share) every slot's PMD table again. */
		for (unsigned long s = 0; s < nr_slots; s++) {
			idx = data_page(&seed, s);
			check_page(idx, role_name[FAULTER]);
		}
		if (!(++iter % 16))
			check_file(idx, role_name[FAULTER]);
		/* Unshare one table of this mm now and then. */
		if (!(iter % 64) &&
		    madvise(page_addr(idx), HPAGE_SIZE, MADV_DONTNEED))
			report(&sh->op_errors, "%s: madvise: %s",
			       role_name[FAULTER], strerror(errno));
		count_op(FAULTER);
		sched_yield();
	}
	return NULL;
}

static void faulter(unsigned long long seed)
{
	unsigned long long seeds[MAX_THREADS];
	pthread_t tid[MAX_THREADS];

	for (unsigned long k = 0; k < nr_threads; k++) {
		seeds[k] = (seed + k * 0x9e3779b97f4a7c15ULL) | 1;
		if (k && pthread_create(&tid[k], NULL, faulter_thread, &seeds[k]))
			ksft_exit_fail_msg("pthread_create failed\n");
	}
	faulter_thread(&seeds[0]);
	for (unsigned long k = 1; k < nr_threads; k++)
		pthread_join(tid[k], NULL);
}

static void splitter(unsigned long long seed)
{
	unsigned long iter = 0;

	while (!stopped() && iter < SPLITTER_OPS) {
		bool use_mprotect = iter++ & 1;

		/* Fault in (share) every slot's PMD table... */
		for (unsigned long s = 0; s < nr_slots; s++)
			check_page(data_page(&seed, s), role_name[SPLITTER]);
		/*
		 * ... then split the VMA in every slot: each split unshares
		 * the table of a slot the rest of the VMA still covers.
		 */
		for (unsigned long s = 0; s < nr_slots && !stopped(); s++) {
			unsigned long i = HOLE_START + rnd(&seed) % (PER_SLOT - HOLE_START);
			char *a = page_addr(page_index(s, i));
			int ret;

			if (use_mprotect)
				ret = mprotect(a, HPAGE_SIZE, PROT_READ);
			else
				ret = munmap(a, HPAGE_SIZE);
			if (ret)
				report(&sh->op_errors, "%s: %s: %s", role_name[SPLITTER],
				       use_mprotect ? "mprotect" : "munmap",
				       strerror(errno));
			count_op(SPLITTER);
		}
		/* One VMA over every slot again: hugetlb VMAs never merge. */
		if (map_whole()) {
			report(&sh->op_errors, "%s: mmap: %s",
			       role_name[SPLITTER], strerror(errno));
			break;
		}
	}
}

static void puncher(unsigned long long seed)
{
	unsigned long iter = 0;

	while (!stopped()) {
		for (unsigned long s = 0; s < nr_slots; s++) {
			unsigned long first = page_index(s, HOLE_START);
			unsigned long end = page_index(s + 1, HOLE_END);

			if (!(++iter % 16)) {
				first = data_page(&seed, s);
				end = first + 1;
			} else if (s == nr_slots - 1) {
				end = page_index(s + 1, 0);
			}
			if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      first * HPAGE_SIZE, (end - first) * HPAGE_SIZE))
				report(&sh->op_errors, "%s: fallocate: %s",
				       role_name[PUNCHER], strerror(errno));
		}
		count_op(PUNCHER);
	}
}

static unsigned long read_meminfo(const char *key)
{
	size_t len = strlen(key);
	unsigned long val = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':') {
			val = strtoul(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return val;
}

/*
 * Kernel log findings: the page table and huge page reports themselves,
 * and a warning, BUG or oops only when its line names hugetlb or page
 * table code (the WARNING line of the hugetlb_split() assertion, the RIP
 * line of an oops in __unmap_hugepage_range()), so that an unrelated
 * warning elsewhere in the kernel does not fail the test.
 */
static const char * const kmsg_patterns[] = {
	"bad pmd", "Bad page", "non-zero pgtables_bytes", "Bad rss-counter",
};

static const char * const kmsg_splats[] = { "WARNING:", "BUG:", "RIP:" };

static const char * const kmsg_splat_where[] = {
	"hugetlb", "hugepage", "huge_pmd", "pmd", "pgtable",
};

static bool kmsg_finding(const char *msg)
{
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(kmsg_patterns); i++)
		if (strstr(msg, kmsg_patterns[i]))
			return true;
	for (i = 0; i < ARRAY_SIZE(kmsg_splats); i++)
		if (strstr(msg, kmsg_splats[i]))
			for (j = 0; j < ARRAY_SIZE(kmsg_splat_where); j++)
				if (strstr(msg, kmsg_splat_where[j]))
					return true;
	return false;
}

/* Read the new kernel log records; print and count the findings. */
static int kmsg_scan(int kfd)
{
	char rec[1024];
	int found = 0;

	for (;;) {
		ssize_t n = read(kfd, rec, sizeof(rec) - 1);
		char *msg;

		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records */
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		msg[strcspn(msg, "\n")] = '\0';
		if (kmsg_finding(msg)) {
			ksft_print_msg("kernel: %s\n", msg);
			found++;
		}
	}
	return found;
}

static void bad_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-t seconds] [-n faulters] [-T threads] [-s splitters]\n"
		"       [-p punchers] [-g 1GiB-slots] [-f hugetlbfs-file]\n", prog);
	exit(KSFT_FAIL);
}

static int open_file(const char *path)
{
	int f;

	if (!path)
		return syscall(__NR_memfd_create, "hugetlb-split-race",
			       MFD_HUGETLB);
	f = open(path, O_CREAT | O_RDWR | O_EXCL, 0600);
	if (f >= 0)
		unlink(path);
	return f;
}

/* A free, 1 GiB aligned range of file_size bytes. */
static char *aligned_range(void)
{
	char *p = mmap(NULL, file_size + SLOT_SIZE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unsigned long a;

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, file_size + SLOT_SIZE);
	a = ((unsigned long)p + SLOT_SIZE - 1) & ~(SLOT_SIZE - 1);
	return (char *)a;
}

static pid_t spawn(int r, unsigned long n)
{
	unsigned long long seed = ((0x9e3779b97f4a7c15ULL * (n + 1)) ^
			 (unsigned long long)(now() * 1e6)) | 1;
	pid_t pid = fork();

	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (map_whole()) {
		report(&sh->op_errors, "mmap: %s", strerror(errno));
		_exit(1);
	}
	if (r == FAULTER)
		faulter(seed);
	else if (r == SPLITTER)
		splitter(seed);
	else
		puncher(seed);
	_exit(0);
}

/*
 * Wait for the children to stop, at most TEARDOWN_S seconds, then kill
 * them; count those that died of a signal, failed, or would not go.
 */
static unsigned long reap(pid_t *pids, unsigned long n)
{
	unsigned long bad = 0, left = n;
	double t0 = now();
	bool killed = false;
	int status;

	while (left) {
		left = 0;
		for (unsigned long k = 0; k < n; k++) {
			if (pids[k] <= 0)
				continue;
			if (waitpid(pids[k], &status, WNOHANG) != pids[k]) {
				left++;
				continue;
			}
			if (!killed && (WIFSIGNALED(status) || WEXITSTATUS(status))) {
				ksft_print_msg("pid %d: %s %d\n", (int)pids[k],
					       WIFSIGNALED(status) ? "signal" : "exit",
					       WIFSIGNALED(status) ? WTERMSIG(status) :
					       WEXITSTATUS(status));
				bad++;
			}
			pids[k] = 0;
		}
		if (!left)
			break;
		if (now() - t0 > 2 * TEARDOWN_S) {
			ksft_print_msg("%lu processes stuck\n", left);
			return bad + left;
		}
		if (!killed && now() - t0 > TEARDOWN_S) {
			ksft_print_msg("%lu processes still running, killing them\n", left);
			for (unsigned long k = 0; k < n; k++)
				if (pids[k] > 0)
					kill(pids[k], SIGKILL);
			killed = true;
			bad += left;
		}
		usleep(POLL_US);
	}
	return bad;
}

int main(int argc, char **argv)
{
	unsigned long nr[NR_ROLES] = { 3, 3, 2 };
	unsigned long free0, total0, need, n = 0;
	unsigned long dead = 0, kmsg_found = 0, bad_file = 0;
	double seconds = 30, t0, detected = -1;
	const char *path = NULL;
	unsigned long respawned = 0;
	pid_t pids[MAX_PROCS];
	int role[MAX_PROCS];
	int kfd, opt, status;

	while ((opt = getopt(argc, argv, "t:n:T:s:p:g:f:h")) != -1) {
		switch (opt) {
		case 't':
			seconds = atof(optarg);
			break;
		case 'n':
			nr[FAULTER] = strtoul(optarg, NULL, 0);
			break;
		case 'T':
			nr_threads = strtoul(optarg, NULL, 0);
			break;
		case 's':
			nr[SPLITTER] = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			nr[PUNCHER] = strtoul(optarg, NULL, 0);
			break;
		case 'g':
			nr_slots = strtoul(optarg, NULL, 0);
			break;
		case 'f':
			path = optarg;
			break;
		default:
			bad_usage(argv[0]);
		}
	}
	if (optind != argc || seconds <= 0 || !nr_slots || nr_slots > 64 ||
	    !nr_threads || nr_threads > MAX_THREADS ||
	    nr[FAULTER] + nr[SPLITTER] + nr[PUNCHER] > MAX_PROCS ||
	    nr[FAULTER] + nr[SPLITTER] < 2 || !nr[SPLITTER] || !nr[PUNCHER])
		bad_usage(argv[0]);

	ksft_print_header();
	if (read_meminfo("Hugepagesize") != HPAGE_SIZE >> 10)
		ksft_exit_skip("the default huge page size is not 2 MiB\n");
	free0 = read_meminfo("HugePages_Free");
	total0 = read_meminfo("HugePages_Total");
	need = nr_slots * (DATA_PAGES + 1) + PUNCH_SLACK;
	if (free0 < need)
		ksft_exit_skip("needs %lu free huge pages, %lu free\n", need, free0);

	file_size = nr_slots * SLOT_SIZE;
	fd = open_file(path);
	if (fd < 0)
		ksft_exit_skip("no hugetlb file (%s): %s\n",
			       path ? path : "memfd MFD_HUGETLB", strerror(errno));
	if (ftruncate(fd, file_size))
		ksft_exit_fail_msg("ftruncate: %s\n", strerror(errno));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	base = aligned_range();
	if (sh == MAP_FAILED || !base || map_whole())
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	for (unsigned long s = 0; s < nr_slots; s++)
		for (unsigned long i = 0; i < DATA_PAGES; i++) {
			unsigned long idx = page_index(s, DATA_FIRST + i);
			unsigned long long *p = (unsigned long long *)page_addr(idx);

			p[0] = tag(idx);
			p[HPAGE_SIZE / 8 - 1] = tag(idx);
		}

	kfd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kfd >= 0)
		lseek(kfd, 0, SEEK_END);
	else
		ksft_print_msg("/dev/kmsg: %s: kernel log not checked\n",
			       strerror(errno));
	ksft_print_msg("%lu x 1 GiB slots at %p, %.0f s\n", nr_slots, base, seconds);
	ksft_print_msg("%lu faulters, %lu splitters, %lu punchers\n",
		       nr[FAULTER], nr[SPLITTER], nr[PUNCHER]);
	ksft_set_plan(4);
	fflush(stdout);

	t0 = now();
	for (int r = 0; r < NR_ROLES; r++)
		for (unsigned long k = 0; k < nr[r]; k++) {
			role[n] = r;
			pids[n] = spawn(r, n);
			n++;
		}
	/* Only the children map the file during the race. */
	munmap(base, file_size);
	ksft_print_msg("race started\n");
	fflush(stdout);

	while (now() - t0 < seconds && detected < 0) {
		usleep(POLL_US);
		if (kfd >= 0 && kmsg_scan(kfd)) {
			kmsg_found++;
			detected = now() - t0;
		}
		if (__atomic_load_n(&sh->bad_reads, __ATOMIC_RELAXED) && detected < 0)
			detected = now() - t0;
		for (unsigned long k = 0; k < n; k++) {
			if (waitpid(pids[k], &status, WNOHANG) != pids[k])
				continue;
			if (WIFEXITED(status) && !WEXITSTATUS(status) &&
			    role[k] == SPLITTER) {
				/* A fresh mm: its teardown checks the old one. */
				pids[k] = spawn(SPLITTER, k + n * ++respawned);
				continue;
			}
			ksft_print_msg("%s %d exited early (status %#x)\n",
				       role_name[role[k]], (int)pids[k], status);
			pids[k] = 0;
			dead++;
			if (detected < 0)
				detected = now() - t0;
		}
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	dead += reap(pids, n);
	ksft_print_msg("ops: %lu faulter loops, %lu splits, %lu punch rounds in %.1f s\n",
		       sh->ops[FAULTER], sh->ops[SPLITTER], sh->ops[PUNCHER],
		       now() - t0);

	/* The data through read(): every page holds its tag or is a hole. */
	for (unsigned long s = 0; s < nr_slots; s++)
		for (unsigned long i = 0; i < DATA_PAGES; i++) {
			unsigned long before = sh->bad_reads;

			check_file(page_index(s, DATA_FIRST + i), "final");
			bad_file += sh->bad_reads - before;
		}
	close(fd);

	ksft_test_result(!sh->bad_reads && !sh->op_errors && !dead,
			 "race: %lu bad reads, %lu failed calls, %lu processes died%s%s\n",
			 sh->bad_reads - bad_file, sh->op_errors, dead,
			 sh->first_error[0] ? ": " : "", sh->first_error);
	ksft_test_result(!bad_file, "data intact after the race (%lu bad pages)\n",
			 bad_file);

	/* Freed huge pages can take a moment to reach the pool. */
	for (int i = 0; i < 50 && read_meminfo("HugePages_Free") != free0; i++)
		usleep(100000);
	ksft_test_result(read_meminfo("HugePages_Free") == free0 &&
			 read_meminfo("HugePages_Total") == total0,
			 "huge pages returned: free %lu of %lu (before: %lu of %lu)\n",
			 read_meminfo("HugePages_Free"), read_meminfo("HugePages_Total"),
			 free0, total0);

	if (kfd >= 0) {
		sleep(1);	/* messages of the exiting processes' mm teardown */
		kmsg_found += kmsg_scan(kfd);
		ksft_test_result(!kmsg_found, "kernel log clean\n");
	} else {
		ksft_test_result_skip("kernel log not readable\n");
	}
	if (ksft_get_fail_cnt()) {
		if (detected < 0)
			detected = now() - t0;
		ksft_print_msg("failure detected after %.2f s\n", detected);
	}
	ksft_finished();
}
