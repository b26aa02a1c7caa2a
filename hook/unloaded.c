/* leaksnap hook: the mappings of libraries that dlclose() unloads.
 *
 * A block a plugin allocated outlives the plugin: once dlclose() has
 * unmapped it, the block's frames point at nothing in later dumps' maps,
 * and leakdiff would take the block for a new one.  So the dlclose wrapper
 * reads /proc/self/maps before and after the real call; the lines of a
 * file that are gone, when one of them was executable, are kept, with the
 * file's build ID, and every later dump carries them as "unloaded=<maps
 * line>" metadata (and a "build_id=" line when no loaded library has that
 * path).  Readers add them where nothing else is mapped (docs/format.md).
 *
 * dlclose is rare and slow already: two reads of the maps cost about what
 * the unmapping does.  What is kept is bounded (UNLOADED_MAX bytes); past
 * that, further libraries are counted in "unloaded_dropped=N". */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "hook_internal.h"
#include "procbuf.h"
#include "unloaded.h"

#define UNLOADED_MAX (256 * 1024)

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct buf kept;        /* "unloaded=" and "build_id=" lines */
static atomic_ulong dropped;   /* libraries not kept: over UNLOADED_MAX */
static HOOK_TLS int in_kept;   /* this thread holds kept_lock */

void unloaded_fork_prepare(void)
{
	pthread_mutex_lock(&kept_lock);
}

void unloaded_fork_parent(void)
{
	pthread_mutex_unlock(&kept_lock);
}

void unloaded_fork_child(void)
{
	pthread_mutex_unlock(&kept_lock);
}

/* The line of @b starting at @p: its end (at the '\n' or the buffer's). */
static const char *line_end(const struct buf *b, const char *p)
{
	const char *nl = memchr(p, '\n', (size_t)(b->p + b->len - p));
	return nl ? nl : b->p + b->len;
}

static bool has_line(const struct buf *b, const char *s, size_t n)
{
	for (const char *p = b->p, *end = b->p + b->len; p < end;) {
		const char *e = line_end(b, p);
		if ((size_t)(e - p) == n && memcmp(p, s, n) == 0)
			return true;
		p = e + 1;
	}
	return false;
}

/* The path of maps line [p, e) (after perms, offset, dev and inode), or
 * NULL; *@n its length. */
static const char *line_path(const char *p, const char *e, size_t *n)
{
	for (int field = 0; field < 5; field++) {
		while (p < e && *p != ' ')
			p++;
		while (p < e && *p == ' ')
			p++;
	}
	if (p >= e || *p != '/')
		return NULL;
	*n = (size_t)(e - p);
	return p;
}

/* Whether maps line [p, e) is executable ("r-xp": perms' third letter). */
static bool line_exec(const char *p, const char *e)
{
	while (p < e && *p != ' ')
		p++;
	return e - p > 3 && p[3] == 'x';
}

/* The start address of maps line @p. */
static uintptr_t line_start(const char *p, const char *e)
{
	uintptr_t v = 0;
	for (; p < e; p++) {
		unsigned d = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0')
			   : *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10) : 16;
		if (d == 16)
			break;
		v = v << 4 | d;
	}
	return v;
}

/* Lines of @before (file-backed) that @after does not have.  Both are in
 * address order, so one walk over each. */
static void gone_lines(const struct buf *before, const struct buf *after, struct buf *gone)
{
	const char *q = after->p, *qend = after->p + after->len;
	for (const char *p = before->p, *end = before->p + before->len; p < end;) {
		const char *e = line_end(before, p);
		uintptr_t start = line_start(p, e);
		while (q < qend) {
			const char *qe = line_end(after, q);
			if (line_start(q, qe) >= start)
				break;
			q = qe + 1;
		}
		size_t n;
		bool stays = false;
		for (const char *r = q; r < qend;) {
			const char *re = line_end(after, r);
			if (line_start(r, re) != start)
				break;
			if (re - r == e - p && memcmp(r, p, (size_t)(e - p)) == 0) {
				stays = true;
				break;
			}
			r = re + 1;
		}
		if (!stays && line_path(p, e, &n))
			buf_add(gone, p, (size_t)(e - p) + 1);
		p = e + 1;
	}
}

/* Whether some line of @gone maps @path executable. */
static bool path_had_code(const struct buf *gone, const char *path, size_t len)
{
	for (const char *p = gone->p, *end = gone->p + gone->len; p < end;) {
		const char *e = line_end(gone, p);
		size_t n;
		const char *q = line_path(p, e, &n);
		if (q && n == len && memcmp(q, path, n) == 0 && line_exec(p, e))
			return true;
		p = e + 1;
	}
	return false;
}

/* The "build_id=HEX PATH" line of @ids (other lines are passed over: a
 * cmdline= may end in the same path) for @path: its start, or NULL. */
static const char *build_id_line(const struct buf *ids, const char *path, size_t len,
				 size_t *n)
{
	for (const char *p = ids->p, *end = ids->p + ids->len; p < end;) {
		const char *e = line_end(ids, p);
		const char *sp = memchr(p, ' ', (size_t)(e - p));
		if (sp && e - p > 9 && memcmp(p, "build_id=", 9) == 0 &&
		    (size_t)(e - sp - 1) == len && memcmp(sp + 1, path, len) == 0) {
			*n = (size_t)(e - p);
			return p;
		}
		p = e + 1;
	}
	return NULL;
}

void unloaded_before(struct unload_probe *pr)
{
	memset(pr, 0, sizeof(*pr));
	if (!atomic_load(&hook_active))
		return;
	pr->on = read_proc("maps", &pr->maps);
	if (pr->on)
		dump_build_ids(&pr->ids, &pr->maps);
}

void unloaded_after(struct unload_probe *pr)
{
	struct buf after = {0}, gone = {0}, add = {0}, path_clean = {0}, merged = {0};
	if (!pr->on || in_kept || !read_proc("maps", &after) || after.failed || pr->maps.failed)
		goto out;
	gone_lines(&pr->maps, &after, &gone);
	unsigned long libs = 0;
	for (const char *p = gone.p, *end = gone.p + gone.len; p < end;) {
		const char *e = line_end(&gone, p);
		size_t n, k;
		const char *path = line_path(p, e, &n);
		if (path && path_had_code(&gone, path, n)) {
			buf_add(&add, "unloaded=", 9);
			buf_add_clean(&add, p, (size_t)(e - p));
			buf_add(&add, "\n", 1);
			/* the build IDs' paths went through the same cleaning */
			path_clean.len = 0;
			buf_add_clean(&path_clean, path, n);
			const char *id = path_clean.failed ? NULL
				: build_id_line(&pr->ids, path_clean.p, path_clean.len, &k);
			if (id && line_exec(p, e)) {
				buf_add(&add, id, k + 1);
				libs++;
			}
		}
		p = e + 1;
	}
	if (!add.len || add.failed)
		goto out;
	pthread_mutex_lock(&kept_lock);
	in_kept = 1;
	/* A line kept before moves to the end: readers take the latest
	 * record of an address range (a library unloaded again where another
	 * was unloaded since). */
	for (const char *p = kept.p, *end = kept.p + kept.len; p < end;) {
		const char *e = line_end(&kept, p);
		if (!has_line(&add, p, (size_t)(e - p)))
			buf_add(&merged, p, (size_t)(e - p) + 1);
		p = e + 1;
	}
	for (const char *p = add.p, *end = add.p + add.len; p < end;) {
		const char *e = line_end(&add, p);
		if (!has_line(&merged, p, (size_t)(e - p)))
			buf_add(&merged, p, (size_t)(e - p) + 1);
		p = e + 1;
	}
	if (merged.failed || merged.len > UNLOADED_MAX) {
		atomic_fetch_add(&dropped, libs ? libs : 1);
	} else {
		struct buf old = kept;
		kept = merged;
		merged = old;
	}
	in_kept = 0;
	pthread_mutex_unlock(&kept_lock);
out:
	buf_free(&after);
	buf_free(&gone);
	buf_free(&add);
	buf_free(&path_clean);
	buf_free(&merged);
	buf_free(&pr->maps);
	buf_free(&pr->ids);
}

void unloaded_meta(struct buf *meta)
{
	/* a dump from a signal handler that interrupted this thread's own
	 * update (in_kept): without the kept lines, rather than wait for
	 * itself */
	if (in_kept)
		return;
	pthread_mutex_lock(&kept_lock);
	in_kept = 1;
	/* @meta holds the loaded libraries' build IDs already: a kept one for
	 * the same path would contradict them, and the loaded one wins. */
	size_t loaded = meta->len;
	for (const char *p = kept.p, *end = kept.p + kept.len; p < end;) {
		const char *e = line_end(&kept, p);
		if (e - p > 9 && memcmp(p, "build_id=", 9) == 0) {
			const char *sp = memchr(p, ' ', (size_t)(e - p));
			size_t n;
			struct buf head = {meta->p, loaded, loaded, false};
			if (sp && build_id_line(&head, sp + 1, (size_t)(e - sp - 1), &n)) {
				p = e + 1;
				continue;
			}
		}
		buf_add(meta, p, (size_t)(e - p) + 1);
		p = e + 1;
	}
	in_kept = 0;
	pthread_mutex_unlock(&kept_lock);
	unsigned long d = atomic_load(&dropped);
	if (d)
		buf_printf(meta, "unloaded_dropped=%lu\n", d);
}
