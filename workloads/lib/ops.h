/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The operations that disturb a shared hugetlb mapping, one numbering for
 * every workload: shmdb's disruptor runs any of them, racer's unsharers the
 * four that do not change the file size (RACER_OPS).  Option lists parse
 * with parse_list(s, op_names, ...): bit i of the mask is operation i.
 */
#ifndef HUGELAB_OPS_H
#define HUGELAB_OPS_H

enum wl_op {
	OP_PUNCH,       /* fallocate(PUNCH_HOLE) */
	OP_TRUNCATE,    /* ftruncate shrink and regrow */
	OP_MPROTECT,    /* PROT_READ on a range and back: splits the VMA */
	OP_MUNMAP,      /* unmap a range and map it again */
	OP_DONTNEED,    /* MADV_DONTNEED */
	NOPS
};

extern const char *const op_names[NOPS + 1];       /* NULL-terminated */

#endif
