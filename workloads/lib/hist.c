// SPDX-License-Identifier: GPL-2.0
/* log2 histogram, see hist.h. */
#include <string.h>

#include "hist.h"

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned int hist_bucket(uint64_t v)
{
	return v ? 64 - (unsigned int)__builtin_clzll(v) : 0;
}

uint64_t hist_bucket_upper(unsigned int i)
{
	if (i == 0)
		return 0;
	if (i >= 64)
		return UINT64_MAX;
	return (1ull << i) - 1;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	for (int i = 0; i < HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->count && src->min < dst->min)
		dst->min = src->min;
	if (src->count && src->max > dst->max)
		dst->max = src->max;
}

void hist_merge_atomic(struct hist *dst, const struct hist *src)
{
	if (!src->count)
		return;
	for (int i = 0; i < HIST_BUCKETS; i++)
		if (src->b[i])
			__atomic_fetch_add(&dst->b[i], src->b[i], __ATOMIC_RELAXED);
	__atomic_fetch_add(&dst->sum, src->sum, __ATOMIC_RELAXED);

	uint64_t cur = __atomic_load_n(&dst->min, __ATOMIC_RELAXED);

	while (src->min < cur &&
	       !__atomic_compare_exchange_n(&dst->min, &cur, src->min, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	cur = __atomic_load_n(&dst->max, __ATOMIC_RELAXED);
	while (src->max > cur &&
	       !__atomic_compare_exchange_n(&dst->max, &cur, src->max, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	/* count last, released: a reader that sees it sees the buckets */
	__atomic_fetch_add(&dst->count, src->count, __ATOMIC_RELEASE);
}

uint64_t hist_percentile(const struct hist *h, double q)
{
	if (!h->count)
		return 0;
	if (q <= 0)
		return h->min;
	if (q > 1)
		q = 1;

	double r = q * (double)h->count;
	uint64_t rank = (uint64_t)r;

	if ((double)rank < r)
		rank++;
	if (rank == 0)
		rank = 1;

	uint64_t seen = 0;

	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			uint64_t v = hist_bucket_upper(i);

			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
	}
	return h->max;
}

double hist_mean(const struct hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}

void hist_json(struct json *j, const struct hist *h)
{
	json_obj_begin(j);
	json_kv_str(j, "unit", "ns");
	json_kv_uint(j, "count", h->count);
	json_kv_uint(j, "sum", h->sum);
	json_kv_uint(j, "min", h->count ? h->min : 0);
	json_kv_uint(j, "max", h->max);
	json_kv_double(j, "mean", hist_mean(h));
	json_kv_uint(j, "p50", hist_percentile(h, 0.50));
	json_kv_uint(j, "p90", hist_percentile(h, 0.90));
	json_kv_uint(j, "p99", hist_percentile(h, 0.99));
	json_kv_uint(j, "p999", hist_percentile(h, 0.999));
	json_key(j, "buckets");
	json_arr_begin(j);
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		if (!h->b[i])
			continue;
		json_arr_begin(j);
		json_uint(j, hist_bucket_upper(i));
		json_uint(j, h->b[i]);
		json_arr_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}
