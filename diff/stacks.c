/* leaksnap diff: the growing stacks one by one (folded output, growth profiles). */
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"

/* Fill @frames (room for 256) with stack @s's frames, outermost first,
 * symbolized; returns their number, or -1 when out of memory. */
static int stack_frames(struct leaksnap_diff *d, size_t s,
			const struct leaksnap_diff_frame **frames, struct leaksnap_error *err)
{
	const struct seq *st = &d->stacks.ents[s];
	const uint32_t *ids = d->stacks.pool + st->off;
	uint32_t len = SEQ_LEN(st);
	for (uint32_t f = 0; f < len; f++) {
		uint32_t c = d->frames[ids[len - 1 - f]].canon;
		if (lsd_frame_symbols(d, c, err) != 0)
			return -1;
		frames[f] = &d->info[c].view;
	}
	return (int)len;
}

/* Call @fn with stack @s's frames; @frames has room for 256. */
static int emit_stack(struct leaksnap_diff *d, size_t s, const struct leaksnap_diff_frame **frames,
		      leaksnap_diff_stack_fn fn, void *arg, uint64_t bytes,
		      struct leaksnap_error *err)
{
	int len = stack_frames(d, s, frames, err);
	return len < 0 ? -1 : fn(arg, frames, (size_t)len, bytes);
}

/* leaksnap_diff_foreach_growing_stack and its _delta form: exactly one of @fn and
 * @dfn is set. */
static int foreach_growing(struct leaksnap_diff *d, leaksnap_diff_stack_fn fn,
			   leaksnap_diff_stack_delta_fn dfn, void *arg, struct leaksnap_error *err);

int leaksnap_diff_foreach_growing_stack(struct leaksnap_diff *d, leaksnap_diff_stack_fn fn,
					void *arg, struct leaksnap_error *err)
{
	return foreach_growing(d, fn, NULL, arg, err);
}

int leaksnap_diff_foreach_growing_stack_delta(struct leaksnap_diff *d,
					      leaksnap_diff_stack_delta_fn fn, void *arg,
					      struct leaksnap_error *err)
{
	return foreach_growing(d, NULL, fn, arg, err);
}

static int foreach_growing(struct leaksnap_diff *d, leaksnap_diff_stack_fn fn,
			   leaksnap_diff_stack_delta_fn dfn, void *arg, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (!d->ranked || d->nsuspects == 0)
		return 0;
	/* the stacks of each group, by a counting sort on group_of */
	size_t nst = d->stacks.count, stride = 2 * d->n, last = d->n - 1;
	size_t *start = calloc(d->group_count + 2, sizeof(*start));
	uint32_t *order = malloc((nst ? nst : 1) * sizeof(*order));
	const struct leaksnap_diff_frame **frames = malloc(256 * sizeof(*frames));
	int rc = 0;
	if (!start || !order || !frames) {
		rc = kit_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
		goto out;
	}
	for (size_t s = 0; s < nst; s++)
		if (d->group_of[s] != NONE)
			start[d->group_of[s] + 1]++;
	for (size_t g = 0; g < d->group_count; g++)
		start[g + 1] += start[g];
	for (size_t s = 0; s < nst; s++)
		if (d->group_of[s] != NONE)
			order[start[d->group_of[s]]++] = (uint32_t)s;
	/* start[g] is now the end of group g's stacks */
	lsd_order_cands(d->suspects, d->nsuspects, &d->suspects_ordered, d->nsuspects,
			lsd_cmp_suspect);
	for (size_t i = 0; i < d->nsuspects && rc == 0; i++) {
		uint32_t g = d->suspects[i].group;
		size_t from = g ? start[g - 1] : 0;
		for (size_t k = from; k < start[g] && rc == 0; k++) {
			uint32_t s = order[k];
			const uint64_t *acc = d->acc + (size_t)s * stride;
			if (acc[last] <= acc[0])
				continue;
			if (fn) {
				rc = emit_stack(d, s, frames, fn, arg, acc[last] - acc[0], err);
				continue;
			}
			int len = stack_frames(d, s, frames, err);
			int64_t count = (int64_t)acc[d->n + last] - (int64_t)acc[d->n];
			rc = len < 0 ? -1
				     : dfn(arg, frames, (size_t)len, acc[last] - acc[0], count);
		}
	}
out:
	free(start);
	free(order);
	free(frames);
	return rc;
}

/* A growing stack kept for leaksnap_diff_foreach_top_growing_stack: a min-heap on
 * (bytes, then the later stack first), so the root is the weakest kept. */
struct top_stack {
	uint64_t bytes;
	uint32_t stack;
};

static bool top_weaker(const struct top_stack *a, const struct top_stack *b)
{
	return a->bytes != b->bytes ? a->bytes < b->bytes : a->stack > b->stack;
}

static void top_down(struct top_stack *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && top_weaker(&h[l], &h[m]))
			m = l;
		if (r < n && top_weaker(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		struct top_stack t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static int cmp_top_stack(const void *a, const void *b)
{
	const struct top_stack *x = a, *y = b;
	return top_weaker(y, x) ? -1 : top_weaker(x, y) ? 1 : 0;
}

int leaksnap_diff_foreach_top_growing_stack(struct leaksnap_diff *d, size_t max,
					    leaksnap_diff_stack_fn fn, void *arg,
					    uint64_t *rest_bytes, size_t *rest_stacks,
					    struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (rest_bytes)
		*rest_bytes = 0;
	if (rest_stacks)
		*rest_stacks = 0;
	if (!d->ranked || d->nsuspects == 0)
		return 0;
	size_t nst = d->stacks.count, stride = 2 * d->n, last = d->n - 1, kept = 0;
	uint64_t rest = 0, nrest = 0;
	uint8_t *is_suspect = calloc(d->group_count ? d->group_count : 1, 1);
	struct top_stack *heap = malloc((max ? max : 1) * sizeof(*heap));
	const struct leaksnap_diff_frame **frames = malloc(256 * sizeof(*frames));
	int rc = 0;
	if (!is_suspect || !heap || !frames) {
		rc = kit_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
		goto out;
	}
	for (size_t i = 0; i < d->nsuspects; i++)
		is_suspect[d->suspects[i].group] = 1;
	for (size_t s = 0; s < nst; s++) {
		if (d->group_of[s] == NONE || !is_suspect[d->group_of[s]])
			continue;
		const uint64_t *acc = d->acc + s * stride;
		if (acc[last] <= acc[0])
			continue;
		struct top_stack t = {acc[last] - acc[0], (uint32_t)s};
		if (kept < max) {
			heap[kept++] = t;
			if (kept == max)
				for (size_t i = kept / 2; i-- > 0;)
					top_down(heap, kept, i);
			continue;
		}
		if (max && top_weaker(&heap[0], &t)) { /* t is kept, the weakest goes */
			struct top_stack evicted = heap[0];
			heap[0] = t;
			top_down(heap, kept, 0);
			t = evicted;
		}
		rest += t.bytes;
		nrest++;
	}
	qsort(heap, kept, sizeof(*heap), cmp_top_stack);
	for (size_t i = 0; i < kept && rc == 0; i++)
		rc = emit_stack(d, heap[i].stack, frames, fn, arg, heap[i].bytes, err);
	if (rest_bytes)
		*rest_bytes = rest;
	if (rest_stacks)
		*rest_stacks = nrest;
out:
	free(is_suspect);
	free(heap);
	free(frames);
	return rc;
}
