// SPDX-License-Identifier: GPL-2.0
/*
 * The shared segment: SysV SHM_HUGETLB (or plain SysV for 4 KiB), a file on
 * hugetlbfs, memfd (MFD_HUGETLB or plain), or shared anonymous memory.
 * Nothing is left behind on any exit path: the SysV id is removed right after
 * the coordinator attaches, the hugetlbfs file is unlinked right after open
 * (a private mount is detached right away), a memfd has no name.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "opts.h"
#include "segment.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef SHM_HUGE_SHIFT
#define SHM_HUGE_SHIFT 26
#endif
#ifndef MFD_HUGE_SHIFT
#define MFD_HUGE_SHIFT 26
#endif
#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC 0x958458f6
#endif

static bool huge(const struct cfg *c) { return c->page_size != 4096; }

static int log2u(uint64_t v) { return 63 - __builtin_clzll(v); }

bool seg_file_backed(const struct cfg *c)
{
	return c->backing == B_HUGETLBFS || c->backing == B_MEMFD;
}

#define SLOT (1ull << 30)

static uint64_t seg_start(const struct cfg *c)
{
	return c->base + (c->skewed ? (2ull << 20) : 0);
}

uint64_t seg_touch_pages(const struct cfg *c)
{
	uint64_t a = seg_start(c);

	if (!c->sparse)
		return c->size / c->page_size;
	return (a + c->size - 1) / SLOT - a / SLOT + 1;
}

uint64_t seg_touch_offset(const struct cfg *c, uint64_t i)
{
	uint64_t a = seg_start(c), at;

	if (!c->sparse)
		return i * c->page_size;
	/* the first page of the segment in the i-th slot it spans */
	at = (a / SLOT + i) * SLOT;
	return at > a ? at - a : 0;
}

/* A mounted hugetlbfs whose page size is c->page_size, or "". */
static void find_hugetlbfs(const struct cfg *c, char *dir, size_t len)
{
	FILE *f = fopen("/proc/mounts", "re");
	char dev[256], mnt[256], type[64];

	dir[0] = 0;
	if (!f)
		return;
	while (fscanf(f, "%255s %255s %63s %*[^\n]", dev, mnt, type) == 3) {
		struct statfs st;

		if (strcmp(type, "hugetlbfs") || statfs(mnt, &st))
			continue;
		if ((uint64_t)st.f_bsize == c->page_size &&
		    access(mnt, W_OK) == 0) {
			snprintf(dir, len, "%s", mnt);
			break;
		}
	}
	fclose(f);
}

static int open_hugetlbfs(const struct cfg *c, struct seg *s, char *err,
			  size_t errlen)
{
	char path[320];
	struct statfs st;
	int fd;

	if (c->hugetlbfs_dir)
		snprintf(s->hugetlbfs_dir, sizeof(s->hugetlbfs_dir), "%s",
			 c->hugetlbfs_dir);
	else
		find_hugetlbfs(c, s->hugetlbfs_dir, sizeof(s->hugetlbfs_dir));

	if (!s->hugetlbfs_dir[0]) {
		/* No mount of this size: mount a private one, detach at once. */
		char opt[64];

		snprintf(s->hugetlbfs_dir, sizeof(s->hugetlbfs_dir),
			 "/tmp/shmdb-hugetlbfs.XXXXXX");
		if (!mkdtemp(s->hugetlbfs_dir)) {
			snprintf(err, errlen, "mkdtemp: %s", strerror(errno));
			return -1;
		}
		snprintf(opt, sizeof(opt), "pagesize=%llu",
			 (unsigned long long)c->page_size);
		if (mount("none", s->hugetlbfs_dir, "hugetlbfs", 0, opt)) {
			snprintf(err, errlen,
				 "no hugetlbfs mount with page size %llu and mount failed: %s (use --hugetlbfs-dir)",
				 (unsigned long long)c->page_size, strerror(errno));
			rmdir(s->hugetlbfs_dir);
			return -1;
		}
		s->private_mount = true;
	}
	if (statfs(s->hugetlbfs_dir, &st) || st.f_type != HUGETLBFS_MAGIC ||
	    (uint64_t)st.f_bsize != c->page_size) {
		snprintf(err, errlen, "%s is not a hugetlbfs mount with page size %llu",
			 s->hugetlbfs_dir, (unsigned long long)c->page_size);
		fd = -1;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/shmdb.%d", s->hugetlbfs_dir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		goto out;
	}
	unlink(path);
out:
	if (s->private_mount) {
		umount2(s->hugetlbfs_dir, MNT_DETACH);
		rmdir(s->hugetlbfs_dir);
	}
	return fd;
}

char *seg_map_at(const struct cfg *c, const struct seg *s, char *at)
{
	void *p;
	int fixed = at ? MAP_FIXED_NOREPLACE : 0;

	/* sparse: the pool holds only the touched pages; private: a private
	 * hugetlb mapping would reserve the whole segment per process */
	int noreserve = c->sparse || c->priv ? MAP_NORESERVE : 0;

	switch (c->backing) {
	case B_SHM:
		p = shmat(s->shmid, at, 0);
		if (p == (void *)-1)
			return NULL;
		break;
	case B_HUGETLBFS:
	case B_MEMFD:
		p = mmap(at, c->size, PROT_READ | PROT_WRITE,
			 (c->priv ? MAP_PRIVATE : MAP_SHARED) | fixed | noreserve,
			 s->fd, 0);
		break;
	default: {
		int fl = MAP_SHARED | MAP_ANONYMOUS | fixed | noreserve;

		if (huge(c))
			fl |= MAP_HUGETLB | (log2u(c->page_size) << MAP_HUGE_SHIFT);
		p = mmap(at, c->size, PROT_READ | PROT_WRITE, fl, -1, 0);
	}
	}
	if (p == MAP_FAILED)
		return NULL;
	if (at && p != at) {            /* pre-4.17 kernels ignore NOREPLACE */
		munmap(p, c->size);
		errno = EEXIST;
		return NULL;
	}
	/* 4 KiB: never shmem THP (shmem_enabled=always/force/within_size
	 * would map 2 MiB pages and break the model); VM_NOHUGEPAGE wins over
	 * every shmem_enabled value in 6.1 (__shmem_is_huge) */
	if (!huge(c) && madvise(p, c->size, MADV_NOHUGEPAGE)) {
		int e = errno;

		seg_unmap(c, p);
		errno = e;
		return NULL;
	}
	return p;
}

char *seg_map_shared(const struct cfg *c, const struct seg *s)
{
	struct cfg shared = *c;

	shared.priv = 0;
	return seg_map_at(&shared, s, NULL);
}

int seg_unmap(const struct cfg *c, char *p)
{
	if (!p)
		return 0;
	if (c->backing == B_SHM)
		return shmdt(p);
	return munmap(p, c->size);
}

/* The SysV segment, the hugetlbfs file or the memfd (anon: nothing yet). */
static int seg_object(const struct cfg *c, struct seg *s, char *err, size_t errlen)
{
	int shmfl = IPC_CREAT | IPC_EXCL | 0600;
	unsigned int mfdfl = MFD_CLOEXEC;

	switch (c->backing) {
	case B_SHM:
		if (huge(c))
			shmfl |= SHM_HUGETLB | (log2u(c->page_size) << SHM_HUGE_SHIFT);
		if (c->sparse)
			shmfl |= SHM_NORESERVE;
		s->shmid = shmget(IPC_PRIVATE, c->size, shmfl);
		if (s->shmid < 0)
			BAD("shmget(%llu bytes): %s", (unsigned long long)c->size, strerror(errno));
		return 0;
	case B_HUGETLBFS:
		s->fd = open_hugetlbfs(c, s, err, errlen);
		return s->fd < 0 ? -1 : 0;
	case B_MEMFD:
		if (huge(c))
			mfdfl |= MFD_HUGETLB | ((unsigned int)log2u(c->page_size) << MFD_HUGE_SHIFT);
		s->fd = memfd_create("shmdb", mfdfl);
		if (s->fd < 0)
			BAD("memfd_create: %s", strerror(errno));
		return 0;
	case B_ANON:
		break;
	}
	return 0;
}

/*
 * The file's size and the coordinator's mapping.  fork mode: at the
 * sessions' address, inherited.  attach mode: anywhere, not inherited
 * (sessions attach themselves); it keeps the SysV segment alive after
 * IPC_RMID and makes a hugetlb mapping reserve its pages now, before any
 * session starts.  The coordinator never touches it: it adds no page tables.
 */
static int seg_coord_map(const struct cfg *c, struct seg *s, char *err, size_t errlen)
{
	if (s->fd >= 0 && ftruncate(s->fd, (off_t)c->size))
		BAD("ftruncate(%llu): %s", (unsigned long long)c->size, strerror(errno));
	s->coord_addr = seg_map_at(c, s, c->attach == A_FORK ? s->addr : NULL);
	if (!s->coord_addr)
		BAD("map segment (%llu bytes at %p): %s", (unsigned long long)c->size,
		    c->attach == A_FORK ? (void *)s->addr : NULL, strerror(errno));
	if (s->shmid >= 0)
		shmctl(s->shmid, IPC_RMID, NULL);
	if (c->attach == A_ATTACH && madvise(s->coord_addr, c->size, MADV_DONTFORK))
		BAD("madvise(MADV_DONTFORK): %s", strerror(errno));
	return 0;
}

int seg_create(const struct cfg *c, struct seg *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->shmid = -1;
	s->addr = (char *)(uintptr_t)seg_start(c);
	if (seg_object(c, s, err, errlen))
		return -1;
	if (seg_coord_map(c, s, err, errlen)) {
		seg_destroy(c, s);
		return -1;
	}
	return 0;
}

void seg_destroy(const struct cfg *c, struct seg *s)
{
	seg_unmap(c, s->coord_addr);
	s->coord_addr = NULL;
	if (s->shmid >= 0)
		shmctl(s->shmid, IPC_RMID, NULL);     /* no-op if already gone */
	s->shmid = -1;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

int seg_populate_read(char *base, uint64_t len)
{
	const uint64_t chunk = 2ull << 20;

	for (uint64_t off = 0; off < len; off += chunk) {
		uint64_t n = len - off < chunk ? len - off : chunk;

		if (madvise(base + off, n, MADV_POPULATE_READ))
			return off == 0 && errno == EINVAL ? -EOPNOTSUPP : -errno;
	}
	return 0;
}

uint64_t session_buffers(const struct cfg *c)
{
	if (!c->sparse)
		return c->size / c->buffer_size;
	return seg_touch_pages(c) * (c->page_size / c->buffer_size);
}

/*
 * Fill the segment before the sessions start (default): a short-lived
 * process write-faults every page, so the page cache holds zeroed pages and
 * exits, freeing its page tables.  Sessions then attach to an initialised
 * segment, as database sessions do, and the attach phase measures mapping
 * existing pages, not zeroing new ones (slow under TCG: ~15 s per GiB).
 */
void prefault_main(const struct cfg *c, const struct seg *s, pid_t coordinator)
{
	char *base;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != coordinator)
		_exit(4);
	signal(SIGINT, SIG_IGN);        /* the coordinator handles ^C */
	/* --map private: fill the page cache through a shared mapping */
	base = c->priv ? seg_map_shared(c, s) :
	       c->attach == A_FORK ? s->addr : seg_map_at(c, s, NULL);
	if (!base)
		_exit(3);
	if (c->page_size == 4096 &&
	    madvise(base, c->size, MADV_POPULATE_WRITE) == 0)
		_exit(0);
	for (uint64_t i = 0, n = seg_touch_pages(c); i < n; i++)
		__atomic_fetch_add((uint64_t *)(base + seg_touch_offset(c, i)), 0,
				   __ATOMIC_RELAXED);
	_exit(0);
}
