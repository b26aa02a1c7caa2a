/* leaksnap hook: the mappings of libraries that dlclose() unloads.
 *
 * A block a plugin allocated outlives the plugin: once dlclose() has
 * unmapped it, the block's frames point at nothing in later dumps' maps,
 * and leakdiff would take the block for a new one.  So the dlclose wrapper
 * reads /proc/self/maps before and after the real call; the lines of a
 * file that are gone, when one of them was executable, are kept, with the
 * file's build ID, and every later dump carries them as "unloaded=<maps
 * line>" and "unloaded_build_id=<hex> <inode> <path>" metadata (a key of
 * its own: a library of that path loaded again may be another build).
 * Readers put them back where nothing else is mapped (docs/format.md).
 *
 * A dlclose costs two reads of the maps more (about 0.16 ms).  What is
 * kept is bounded (UNLOADED_MAX bytes): past that, the oldest lines go,
 * counted in "unloaded_dropped=N" (libraries). */
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "hook_internal.h"
#include "procbuf.h"
#include "unloaded.h"

#define UNLOADED_MAX (256 * 1024)

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct buf kept;        /* "unloaded=" and "unloaded_build_id=" lines */
static atomic_ulong dropped;   /* libraries whose lines went: over UNLOADED_MAX */
/* The thread holding kept_lock (its pthread_self()), 0 none: a global
 * rather than a thread-local flag, which would take the in-app build's
 * thread-local storage past its 128 bytes. */
static atomic_uintptr_t kept_owner;

static bool in_kept(void)
{
	return atomic_load_explicit(&kept_owner, memory_order_relaxed) == (uintptr_t)pthread_self();
}

static void kept_take(void)
{
	pthread_mutex_lock(&kept_lock);
	atomic_store_explicit(&kept_owner, (uintptr_t)pthread_self(), memory_order_relaxed);
}

static void kept_give(void)
{
	atomic_store_explicit(&kept_owner, 0, memory_order_relaxed);
	pthread_mutex_unlock(&kept_lock);
}

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
	atomic_store(&kept_owner, 0);
	pthread_mutex_unlock(&kept_lock);
}

bool unloaded_busy_here(void)
{
	return in_kept();
}

bool unloaded_lock_free(void)
{
	if (pthread_mutex_trylock(&kept_lock) != 0)
		return false;
	pthread_mutex_unlock(&kept_lock);
	return true;
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

/* The path of maps line [p, e), or NULL (none, or no file's); *@n its
 * length. */
static const char *line_path(const char *p, const char *e, size_t *n)
{
	p = maps_line_field(p, e, 5);
	if (p >= e || *p != '/')
		return NULL;
	*n = (size_t)(e - p);
	return p;
}

/* The inode of maps line [p, e), or 0. */
static unsigned long long line_inode(const char *p, const char *e)
{
	unsigned long long v = 0;
	for (p = maps_line_field(p, e, 4); p < e && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (unsigned)(*p - '0');
	return v;
}

/* Whether maps line [p, e) is executable ("r-xp": perms' third letter). */
static bool line_exec(const char *p, const char *e)
{
	p = maps_line_field(p, e, 1);
	return e - p > 3 && p[2] == 'x';
}

/* Lines of @before (file-backed) that @after does not have.  Both are in
 * address order, so one walk over each. */
static void gone_lines(const struct buf *before, const struct buf *after, struct buf *gone)
{
	const char *q = after->p, *qend = after->p + after->len;
	for (const char *p = before->p, *end = before->p + before->len; p < end;) {
		const char *e = line_end(before, p);
		uintptr_t start = maps_line_hex(p, e, NULL);
		while (q < qend) {
			const char *qe = line_end(after, q);
			if (maps_line_hex(q, qe, NULL) >= start)
				break;
			q = qe + 1;
		}
		size_t n;
		bool stays = false;
		for (const char *r = q; r < qend;) {
			const char *re = line_end(after, r);
			if (maps_line_hex(r, re, NULL) != start)
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

/* A loaded module's build ID, as unloaded_before() keeps them: paired
 * with a path only after dlclose, for the few libraries gone. */
struct mod_id {
	uintptr_t first_load;
	unsigned len;
	uint8_t id[64];
};

static int collect_id(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct mod_id m;
	const uint8_t *id;
	m.len = module_build_id(info, &m.first_load, &id);
	if (m.len && m.first_load) {
		memcpy(m.id, id, m.len);
		buf_add(data, &m, sizeof(m));
	}
	return 0;
}

/* The kept build ID of the library whose mappings [p, e) of @gone with
 * @path hold its first loadable segment, or NULL. */
static const struct mod_id *gone_id(const struct buf *ids, const struct buf *gone,
				    const char *path, size_t len)
{
	for (const char *p = gone->p, *end = gone->p + gone->len; p < end;) {
		const char *e = line_end(gone, p), *s;
		size_t n;
		const char *q = line_path(p, e, &n);
		if (q && n == len && memcmp(q, path, n) == 0) {
			uintptr_t lo = maps_line_hex(p, e, &s), hi = 0;
			if (s < e && *s == '-')
				hi = maps_line_hex(s + 1, e, NULL);
			const struct mod_id *m = (const struct mod_id *)(const void *)ids->p;
			for (size_t i = 0; i < ids->len / sizeof(*m); i++)
				if (m[i].first_load >= lo && m[i].first_load < hi)
					return &m[i];
		}
		p = e + 1;
	}
	return NULL;
}

static int count_loads(struct dl_phdr_info *info, size_t size, void *data)
{
	unsigned long long *c = data;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		c[0] = info->dlpi_adds;
		c[1] = info->dlpi_subs;
	}
	return 1; /* the first module says it for all */
}

void unloaded_before(struct unload_probe *pr)
{
	memset(pr, 0, sizeof(*pr));
	if (!atomic_load(&hook_active) || !hook_cfg.keep_unloaded)
		return;
	/* The build IDs pair each loaded library's address with its path in
	 * the maps, read just before: a library another thread loaded or
	 * unloaded meanwhile could pair one file's ID with another's path, and
	 * this record is kept for good.  So the loader's load and unload
	 * counts must be the same on both sides of the reads, or there is no
	 * ID at all (the path alone then says which file). */
	for (int tries = 0; tries < 3; tries++) {
		unsigned long long c0[2] = {0, 0}, c1[2] = {1, 1};
		dl_iterate_phdr(count_loads, c0);
		pr->maps.len = 0;
		pr->ids.len = 0;
		pr->on = read_proc("maps", &pr->maps);
		if (!pr->on)
			return;
		dl_iterate_phdr(collect_id, &pr->ids);
		dl_iterate_phdr(count_loads, c1);
		if (c0[0] == c1[0] && c0[1] == c1[1])
			return;
	}
	pr->ids.len = 0;
}

void unloaded_after(struct unload_probe *pr)
{
	struct buf after = {0}, gone = {0}, add = {0}, merged = {0};
	if (!pr->on || in_kept() || !read_proc("maps", &after) || after.failed || pr->maps.failed)
		goto out;
	gone_lines(&pr->maps, &after, &gone);
	for (const char *p = gone.p, *end = gone.p + gone.len; p < end;) {
		const char *e = line_end(&gone, p);
		size_t n;
		const char *path = line_path(p, e, &n);
		if (path && path_had_code(&gone, path, n)) {
			buf_add(&add, "unloaded=", 9);
			buf_add_clean(&add, p, (size_t)(e - p));
			buf_add(&add, "\n", 1);
			/* "unloaded_build_id=HEX INODE PATH": a key of its own, as a
			 * library of that path may be loaded again in another
			 * build; the inode tells the files */
			const struct mod_id *m = line_exec(p, e) && !pr->ids.failed
							 ? gone_id(&pr->ids, &gone, path, n)
							 : NULL;
			if (m) {
				buf_add(&add, "unloaded_build_id=", 18);
				for (unsigned k = 0; k < m->len; k++)
					buf_printf(&add, "%02x", m->id[k]);
				buf_printf(&add, " %llu ", line_inode(p, e));
				buf_add_clean(&add, path, n);
				buf_add(&add, "\n", 1);
			}
		}
		p = e + 1;
	}
	if (!add.len || add.failed)
		goto out;
	kept_take();
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
	/* Full: the oldest lines go (a long-running process's recent unloads
	 * matter most), each library's code line counted as one dropped. */
	size_t cut = 0;
	while (!merged.failed && merged.len - cut > UNLOADED_MAX) {
		const char *p = merged.p + cut, *e = line_end(&merged, p);
		if (e - p > 9 && memcmp(p, "unloaded=", 9) == 0 && line_exec(p + 9, e))
			atomic_fetch_add(&dropped, 1);
		cut = (size_t)(e - merged.p) + 1;
	}
	if (!merged.failed) {
		memmove(merged.p, merged.p + cut, merged.len - cut);
		merged.len -= cut;
		struct buf old = kept;
		kept = merged;
		merged = old;
	}
	kept_give();
out:
	buf_free(&after);
	buf_free(&gone);
	buf_free(&add);
	buf_free(&merged);
	buf_free(&pr->maps);
	buf_free(&pr->ids);
}

void unloaded_meta(struct buf *meta)
{
	/* a dump from a signal handler that interrupted this thread's own
	 * update (in_kept): without the kept lines, rather than wait for
	 * itself */
	if (in_kept())
		return;
	/* (nor when the lock is not had within half a second: this thread
	 * may hold it too, interrupted by a crash dump between taking it and
	 * saying so) */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 500000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	if (pthread_mutex_timedlock(&kept_lock, &until) != 0)
		return;
	atomic_store_explicit(&kept_owner, (uintptr_t)pthread_self(), memory_order_relaxed);
	buf_add(meta, kept.p, kept.len);
	kept_give();
	unsigned long d = atomic_load(&dropped);
	if (d)
		buf_printf(meta, "unloaded_dropped=%lu\n", d);
}
