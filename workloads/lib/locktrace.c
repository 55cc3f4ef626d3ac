// SPDX-License-Identifier: GPL-2.0
/* Lock waits from tracefs' lock:contention_begin/end lines, see locktrace.h. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "locktrace.h"

const char *const lt_lock_names[LT_NLOCKS] = {
	[LT_VMA] = "hugetlb VMA lock",
	[LT_IMMAP] = "i_mmap_rwsem",
	[LT_FAULT_MUTEX] = "fault mutex",
	[LT_MMAP] = "mmap_lock",
	[LT_OTHER] = "other",
};

/* "123.456789" (any number of fraction digits up to 9) in ns; 0: not one. */
static bool parse_ts(const char *s, size_t n, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0;
	int fd = 0;

	while (i < n && isdigit((unsigned char)s[i]))
		sec = sec * 10 + (uint64_t)(s[i++] - '0');
	if (i == 0 || i >= n || s[i++] != '.')
		return false;
	for (; i < n && isdigit((unsigned char)s[i]) && fd < 9; i++, fd++)
		frac = frac * 10 + (uint64_t)(s[i] - '0');
	if (i != n || fd == 0)
		return false;
	while (fd++ < 9)
		frac *= 10;
	*ns = sec * 1000000000ull + frac;
	return true;
}

/* The pid of "comm-PID" ending at end (exclusive), spaces trimmed. */
static bool parse_pid(const char *s, const char *end, uint32_t *pid)
{
	const char *p;
	uint64_t v = 0;

	while (end > s && end[-1] == ' ')
		end--;
	for (p = end; p > s && isdigit((unsigned char)p[-1]); p--)
		;
	if (p == end || p == s || p[-1] != '-' || end - p > 9)
		return false;
	for (; p < end; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	*pid = (uint32_t)v;
	return v > 0;
}

static unsigned int parse_flags(const char *s)
{
	static const struct { const char *name; unsigned int bit; } f[] = {
		{ "SPIN", LCB_F_SPIN }, { "READ", LCB_F_READ }, { "WRITE", LCB_F_WRITE },
		{ "RT", LCB_F_RT }, { "PERCPU", LCB_F_PERCPU }, { "MUTEX", LCB_F_MUTEX },
	};
	unsigned int v = 0;

	while (*s && *s != ')') {
		size_t n = strcspn(s, "|)");

		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
			if (strlen(f[i].name) == n && !strncmp(s, f[i].name, n))
				v |= f[i].bit;
		s += n;
		if (*s == '|')
			s++;
	}
	return v;
}

/* "sched_wakeup: comm=NAME pid=N prio=...": the task woken */
static bool parse_wake(const char *s, struct lt_line *l)
{
	const char *p = strstr(s, " pid=");
	char *end;
	unsigned long v;

	if (!p)
		return false;
	v = strtoul(p + 5, &end, 10);
	if (end == p + 5 || !v || v > UINT32_MAX)
		return false;
	l->woken = (uint32_t)v;
	l->kind = LT_L_WAKE;
	return true;
}

/* "name: ADDR (...)" of a lock event: addr and, for a begin, the flags. */
static bool parse_event(const char *s, struct lt_line *l)
{
	static const char b[] = "contention_begin: ", e[] = "contention_end: ";
	static const char w[] = "sched_wakeup: comm=";
	char *end;

	if (!strncmp(s, w, sizeof(w) - 1))
		return parse_wake(s, l);
	if (!strncmp(s, b, sizeof(b) - 1)) {
		l->kind = LT_L_BEGIN;
		s += sizeof(b) - 1;
	} else if (!strncmp(s, e, sizeof(e) - 1)) {
		l->kind = LT_L_END;
		s += sizeof(e) - 1;
	} else {
		return false;
	}
	l->addr = strtoull(s, &end, 16);
	if (end == s)
		return false;
	if (l->kind == LT_L_BEGIN) {
		const char *f = strstr(end, "(flags=");

		if (!f)
			return false;
		l->flags = parse_flags(f + 7);
	}
	return true;
}

/* " => func+0x1/0x2": the function name. */
static enum lt_kind parse_frame(const char *s, struct lt_line *l)
{
	size_t n;

	s += strspn(s, " ");
	if (strncmp(s, "=> ", 3))
		return LT_L_OTHER;
	s += 3;
	n = strcspn(s, "+ \n");
	if (n >= sizeof(l->frame))
		n = sizeof(l->frame) - 1;
	memcpy(l->frame, s, n);
	l->frame[n] = 0;
	return l->kind = LT_L_FRAME;
}

enum lt_kind lt_parse_line(const char *s, struct lt_line *l)
{
	const char *br = strstr(s, " ["), *close, *ts, *colon;

	memset(l, 0, sizeof(*l));
	if (!br)
		return parse_frame(s, l);
	close = strchr(br, ']');
	if (!close || !parse_pid(s, br, &l->pid))
		return LT_L_OTHER;
	/* after the CPU: the irq-info flags (a token without ':'), the time */
	for (ts = close + 1;;) {
		ts += strspn(ts, " ");
		colon = ts + strcspn(ts, " :");
		if (!*colon)
			return LT_L_OTHER;
		if (*colon == ':')
			break;
		ts = colon;
	}
	if (!parse_ts(ts, (size_t)(colon - ts), &l->ts_ns))
		return LT_L_OTHER;
	s = colon + 1 + strspn(colon + 1, " ");
	if (!strncmp(s, "<stack trace>", 13))
		return l->kind = LT_L_STACK;
	if (!parse_event(s, l))
		l->kind = LT_L_OTHER;
	return l->kind;
}

/* Frames of the lock implementations and of the tracing itself. */
static bool lock_frame(const char *f)
{
	static const char *const pre[] = {
		"__traceiter_", "trace_", "__trace_", "ftrace_", "__ftrace_",
		"stack_trace_", "event_trigger", "arch_stack_walk",
		"rwsem_down_", "down_read", "down_write", "__down", "rwsem_",
		"__rwsem", "mutex_lock", "__mutex_lock", "_raw_", "do_raw_",
		"queued_", "__lock_", "lock_acquire", "lock_contended",
		"percpu_down", "__percpu_down", "rt_mutex", "__rt_mutex",
		"rwbase_", "__pv_queued", "native_queued",
	};

	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (!strncmp(f, pre[i], strlen(pre[i])))
			return true;
	return false;
}

static bool in(const char *f, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(f, *list))
			return true;
	return false;
}

static enum lt_lock site_lock(unsigned int flags, const char *f)
{
	static const char *const vma[] = {
		"hugetlb_vma_lock_read", "hugetlb_vma_lock_write", NULL,
	};
	static const char *const mutex[] = {
		"hugetlb_fault", "hugetlb_no_page", "hugetlb_wp",
		"remove_inode_hugepages", "hugetlbfs_fallocate", NULL,
	};
	/* where hugetlb_vma_lock_read() may be inlined, beside i_mmap_rwsem */
	static const char *const fault[] = {
		"hugetlb_fault", "hugetlb_wp", "hugetlb_no_page", NULL,
	};
	/* i_mmap_lock_read/write are inline: the caller is the site */
	static const char *const immap[] = {
		"huge_pmd_share", "hugetlbfs_punch_hole", "hugetlb_vmtruncate", "remove_inode_hugepages",
		"hugetlb_unmap_file_folio", "hugetlb_unshare_all_pmds",
		"hugetlb_change_protection", "unmap_ref_private", NULL,
	};
	static const char *const mmap[] = {
		"lock_mm_and_find_vma", "do_user_addr_fault", "exc_page_fault", NULL,
	};

	if (in(f, vma))
		return LT_VMA;
	if ((flags & LCB_F_MUTEX) && in(f, mutex))
		return LT_FAULT_MUTEX;
	if (flags & (LCB_F_MUTEX | LCB_F_SPIN | LCB_F_RT | LCB_F_PERCPU))
		return LT_OTHER;
	if (in(f, fault))
		return LT_FAULT_RWSEM;
	if (in(f, immap))
		return LT_IMMAP;
	if (in(f, mmap))
		return LT_MMAP;
	return LT_OTHER;
}

/*
 * The lock's kind from its implementation's frames: the printed flags
 * cannot be trusted (6.1.192 prints "(flags=)" for a mutex's
 * LCB_F_MUTEX, while the event filter sees the value).
 */
static unsigned int frame_flags(const char *f)
{
	if (!strncmp(f, "__mutex_lock", 12) || !strncmp(f, "mutex_lock", 10))
		return LCB_F_MUTEX;
	if (!strncmp(f, "rwsem_down_read", 15) || !strncmp(f, "down_read", 9))
		return LCB_F_READ;
	if (!strncmp(f, "rwsem_down_write", 16) || !strncmp(f, "down_write", 10))
		return LCB_F_WRITE;
	return 0;
}

enum lt_lock lt_classify(unsigned int flags, const char *const *frames, int n,
			 char *site, size_t len)
{
	for (int i = 0; i < n; i++) {
		flags |= frame_flags(frames[i]);
		if (lock_frame(frames[i]))
			continue;
		snprintf(site, len, "%s", frames[i]);
		return site_lock(flags, frames[i]);
	}
	snprintf(site, len, "?");
	return LT_OTHER;
}

int lt_init(struct lt_state *st, lt_wait_fn fn, void *arg)
{
	memset(st, 0, sizeof(*st));
	st->slots = calloc(LT_SLOTS, sizeof(*st->slots));
	st->fn = fn;
	st->arg = arg;
	return st->slots ? 0 : -1;
}

void lt_free(struct lt_state *st)
{
	free(st->slots);
	st->slots = NULL;
}

/* The task's slot (a task keeps its slot: waits are per task); NULL: full. */
static struct lt_open *slot_of(struct lt_state *st, uint32_t pid, bool add)
{
	for (uint32_t i = 0; i < LT_SLOTS; i++) {
		struct lt_open *o = &st->slots[(pid * 2654435761u + i) & (LT_SLOTS - 1)];

		if (o->pid == pid)
			return o;
		if (!o->pid) {
			if (!add)
				return NULL;
			o->pid = pid;
			return o;
		}
	}
	st->full++;
	return NULL;
}

/* The stack just read names the lock of its task's open wait, if not yet. */
static void stack_done(struct lt_state *st)
{
	const char *f[LT_MAX_FRAMES];
	struct lt_open *o;

	if (!st->stack_pid)
		return;
	o = slot_of(st, st->stack_pid, false);
	if (o && o->begin_ns && !o->classified) {
		for (int i = 0; i < st->nframes; i++)
			f[i] = st->frames[i];
		o->lock = lt_classify(o->flags, f, st->nframes, o->site, sizeof(o->site));
		o->classified = true;
	}
	st->stack_pid = 0;
	st->nframes = 0;
}

static void on_begin(struct lt_state *st, const struct lt_line *l)
{
	struct lt_open *o = slot_of(st, l->pid, true);

	st->begins++;
	if (!o || (o->begin_ns && o->addr == l->addr))
		return;         /* a mutex that spun and now sleeps: the same wait */
	o->addr = l->addr;
	o->begin_ns = l->ts_ns;
	o->wake_ns = 0;
	o->flags = l->flags;
	o->classified = false;
	o->lock = LT_OTHER;
	snprintf(o->site, sizeof(o->site), "?");
}

static void on_end(struct lt_state *st, const struct lt_line *l)
{
	struct lt_open *o = slot_of(st, l->pid, false);
	struct lt_wait w;

	st->ends++;
	if (!o || !o->begin_ns || o->addr != l->addr) {
		st->unpaired_ends++;    /* e.g. a spinlock, whose begin is filtered */
		return;
	}
	w = (struct lt_wait){ .pid = l->pid, .lock = o->lock, .addr = o->addr,
			      .begin_ns = o->begin_ns,
			      .end_ns = l->ts_ns, .site = o->site,
			      .flags = o->flags, .classified = o->classified,
			      .wake_ns = o->wake_ns <= l->ts_ns ? o->wake_ns : 0 };
	o->begin_ns = 0;
	st->waits++;
	st->fn(st->arg, &w);
}

/* The waiter was woken: the lock released to it, or a spurious wakeup
 * (the last one before the end counts). */
static void on_wake(struct lt_state *st, const struct lt_line *l)
{
	struct lt_open *o = slot_of(st, l->woken, false);

	st->wakes++;
	if (o && o->begin_ns && l->ts_ns >= o->begin_ns)
		o->wake_ns = l->ts_ns;
}

void lt_feed(struct lt_state *st, const char *line)
{
	struct lt_line l;
	enum lt_kind k = lt_parse_line(line, &l);

	if (k == LT_L_FRAME) {
		if (st->stack_pid && st->nframes < LT_MAX_FRAMES)
			snprintf(st->frames[st->nframes++], sizeof(st->frames[0]), "%s", l.frame);
		return;
	}
	stack_done(st);
	if (k == LT_L_STACK)
		st->stack_pid = l.pid;
	else if (k == LT_L_BEGIN)
		on_begin(st, &l);
	else if (k == LT_L_END)
		on_end(st, &l);
	else if (k == LT_L_WAKE)
		on_wake(st, &l);
}

void lt_finish(struct lt_state *st)
{
	stack_done(st);
}
