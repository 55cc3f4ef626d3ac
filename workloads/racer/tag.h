/* SPDX-License-Identifier: GPL-2.0 */
/*
 * racer page tags: pure logic, unit-tested in tests/test_racer_tag.c.
 *
 * Tagged blocks (every 4 KiB block of a 2 MiB page; 512 evenly spaced
 * blocks of a 1 GiB page) start with a 64-bit tag word
 *   bits 63..48  TAG_MAGIC
 *   bits 47..24  file offset of the block / 4096 (24 bits: files up to 64 GiB)
 *   bits 23..0   generation of the huge page (writers bump it on re-tag)
 * A punched huge page re-faults as zeroes, so 0 is a valid word exactly when
 * the page may have been punched since its last re-tag.
 *
 * Readers check without locks against the page's control block:
 *  - strict (no writer or puncher ran during the read, seqcount unchanged):
 *    every word is the tag of the committed generation, or every word is 0
 *    and the page was punched after its last re-tag;
 *  - weak (a writer or puncher ran concurrently): each word on its own is 0
 *    (only if the page was ever punched) or carries the right offset and a
 *    generation between the one committed before the read and one past the
 *    one committed after it (writers are serialised per page).
 */
#ifndef HUGELAB_RACER_TAG_H
#define HUGELAB_RACER_TAG_H

#include <stdbool.h>
#include <stdint.h>

#define TAG_MAGIC 0x4875ull
#define TAG_BLOCK 4096ull
#define TAG_GEN_MASK 0xffffffull
#define TAG_OFF_MASK 0xffffffull
#define TAG_MAX_FILE (TAG_BLOCK * (TAG_OFF_MASK + 1))

enum tag_verdict { TAG_OK, TAG_ZERO, TAG_BAD };

static inline uint64_t tag_make(uint64_t file_off, uint64_t gen)
{
	return TAG_MAGIC << 48 | ((file_off / TAG_BLOCK) & TAG_OFF_MASK) << 24 |
	       (gen & TAG_GEN_MASK);
}

static inline uint64_t tag_gen(uint64_t w)
{
	return w & TAG_GEN_MASK;
}

/* Is gen in [lo, hi] on the 24-bit generation circle? */
static inline bool tag_gen_between(uint64_t gen, uint64_t lo, uint64_t hi)
{
	return ((gen - lo) & TAG_GEN_MASK) <= ((hi - lo) & TAG_GEN_MASK);
}

/* One word on its own (the weak check). */
static inline enum tag_verdict tag_check_word(uint64_t w, uint64_t file_off,
					      uint64_t gen_lo, uint64_t gen_hi,
					      bool zero_ok)
{
	if (w == 0)
		return zero_ok ? TAG_ZERO : TAG_BAD;
	if (w >> 48 != TAG_MAGIC ||
	    ((w >> 24) & TAG_OFF_MASK) != ((file_off / TAG_BLOCK) & TAG_OFF_MASK))
		return TAG_BAD;
	return tag_gen_between(tag_gen(w), gen_lo, gen_hi) ? TAG_OK : TAG_BAD;
}

/*
 * Strict check of a whole huge page whose words were read into w[0..n-1]
 * (w[k] from file offset page_off + k * stride) in a stable window.
 * Returns TAG_OK (all tags of gen), TAG_ZERO (all zero, allowed) or
 * TAG_BAD; *bad_idx is the first offending word.
 */
static inline enum tag_verdict tag_check_page(const uint64_t *w, unsigned int n,
					      uint64_t page_off, uint64_t stride,
					      uint64_t gen, bool zero_ok,
					      unsigned int *bad_idx)
{
	bool zero = w[0] == 0;

	for (unsigned int k = 0; k < n; k++) {
		uint64_t want = zero ? 0 : tag_make(page_off + k * stride, gen);

		if (w[k] != want) {
			*bad_idx = k;
			return TAG_BAD;
		}
	}
	if (zero && !zero_ok) {
		*bad_idx = 0;
		return TAG_BAD;
	}
	return zero ? TAG_ZERO : TAG_OK;
}

#endif
