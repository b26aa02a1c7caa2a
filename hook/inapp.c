/* leaksnap hook: the in-app build's start and stop (libleakhook-inapp.so).
 *
 * This build interposes nothing by symbol.  leaksnap_start() walks the
 * loaded modules and points GOT slots at the hook's hidden entry points
 * (inapp_patch.c decides which): the allocation functions of the modules
 * whose path matches the regular expression, and dlopen/dlclose/exit in
 * every module, so that libraries loaded later are patched as soon as
 * they are.  leaksnap_stop() puts every slot back (unless something else
 * changed it since), waits until no thread is inside an entry point, and
 * drops the tables.
 *
 * Everything here runs in the program's own calls (start, stop, dlopen,
 * dlclose), never inside an allocation: the patcher's records live in
 * mmap'ed memory all the same, and the loader's lock (dl_iterate_phdr's)
 * is never held around a call that takes another of the loader's. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "inapp.h"
#include "procbuf.h"

#ifdef HOOK_INAPP

atomic_bool inapp_on;
atomic_bool inapp_fenced;
HOOK_TLS struct inapp_stripe *inapp_mine;

/* Stripes --------------------------------------------------------------------- */

#define MEMBARRIER_CMD_GLOBAL_ 1
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED_ 8
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_ 16

static _Atomic(struct inapp_stripe *) stripes; /* the list of them all */
static atomic_int carve_lock;
static struct inapp_stripe *carve_at, *carve_end;
/* A thread's stripe is given back when it ends (its key's destructor). */
static pthread_key_t stripe_key;
static atomic_bool stripe_key_ok;

static void stripe_release(void *v)
{
	struct inapp_stripe *s = v;
	if (inapp_mine == s)
		inapp_mine = NULL;
	atomic_store(&s->owner, 0);
}

struct inapp_stripe *inapp_stripe_get(void)
{
	int tid = (int)syscall(SYS_gettid);
	struct inapp_stripe *s;
	for (s = atomic_load(&stripes); s; s = s->next) {
		int none = 0;
		if (atomic_load_explicit(&s->owner, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&s->owner, &none, tid))
			break;
	}
	if (!s) {
		while (atomic_exchange_explicit(&carve_lock, 1, memory_order_acquire))
			sched_yield();
		if (carve_at == carve_end) {
			size_t n = 4096 / sizeof(struct inapp_stripe);
			carve_at = hook_map(n * sizeof(struct inapp_stripe));
			carve_end = carve_at ? carve_at + n : NULL;
		}
		s = carve_at ? carve_at++ : NULL;
		atomic_store_explicit(&carve_lock, 0, memory_order_release);
		if (!s) {
			/* (no memory for one: the entries of this thread share a
			 * stripe the hard way) */
			static struct inapp_stripe spare = { .shared = true };
			atomic_store(&inapp_fenced, true);
			return &spare;
		}
		atomic_store(&s->owner, tid);
		struct inapp_stripe *head = atomic_load(&stripes);
		do
			s->next = head;
		while (!atomic_compare_exchange_weak(&stripes, &head, s));
	}
	inapp_mine = s;
	if (atomic_load(&stripe_key_ok))
		pthread_setspecific(stripe_key, s);
	return s;
}

/* In a forked child: the other threads are gone, their stripes free. */
static void stripes_fork_child(void)
{
	for (struct inapp_stripe *s = atomic_load(&stripes); s; s = s->next)
		if (s != inapp_mine) {
			atomic_store(&s->in, 0);
			atomic_store(&s->owner, 0);
		}
}

/* At load: whether entries may count themselves in with plain stores. */
static void stripes_init(void)
{
#ifdef SYS_membarrier
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_, 0, 0) == 0)
		return;
#endif
	atomic_store(&inapp_fenced, true);
}

/* Every thread of the process has executed a full barrier. */
static void barrier_all(void)
{
	if (atomic_load(&inapp_fenced))
		return; /* (the entries' own read-modify-writes order them) */
#ifdef SYS_membarrier
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_, 0, 0) == 0 ||
	    syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_, 0, 0) == 0)
		return;
#endif
	/* (cannot happen once registered: let every thread run meanwhile) */
	struct timespec ts = {0, 10000000};
	nanosleep(&ts, NULL);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int lock_owner; /* the thread holding it, 0 none */
struct inapp_state inapp;

void inapp_lock(void)
{
	pthread_mutex_lock(&lock);
	atomic_store(&lock_owner, (int)syscall(SYS_gettid));
}

void inapp_unlock(void)
{
	atomic_store(&lock_owner, 0);
	pthread_mutex_unlock(&lock);
}

bool inapp_lock_mine(void)
{
	return atomic_load(&lock_owner) == (int)syscall(SYS_gettid);
}

/* fork() while another thread holds the lock: the child's would never be
 * released. */
static void fork_prepare(void)
{
	inapp_lock();
}

static void fork_parent(void)
{
	inapp_unlock();
}

static void fork_child(void)
{
	atomic_store(&lock_owner, 0);
	pthread_mutex_init(&lock, NULL);
	stripes_fork_child();
}

/* Options ------------------------------------------------------------------ */

/* The field @f of @o, when @o's size covers it. */
#define OPT_HAS(o, f) ((o)->size >= offsetof(struct leaksnap_options, f) + sizeof((o)->f))

static int apply_options(const struct leaksnap_options *o, const char **libs)
{
	hook_read_config();
	*libs = NULL;
	if (!o)
		return 0;
	if (o->size < sizeof(size_t))
		return -1;
	if (OPT_HAS(o, libs))
		*libs = o->libs;
	if (OPT_HAS(o, frames) && o->frames) {
		if (o->frames > HOOK_MAX_FRAMES)
			return -1;
		hook_cfg.frames = o->frames;
	}
	if (OPT_HAS(o, unwind) && o->unwind && hook_config_unwind(o->unwind) != 0)
		return -1;
	if (OPT_HAS(o, out) && o->out && *o->out && hook_config_out(o->out) != 0)
		return -1;
	if (OPT_HAS(o, interval) && o->interval != 0) {
		if (!(o->interval >= 0.001 && o->interval <= 1e6))
			return -1;
		hook_cfg.interval_ns = (uint64_t)(o->interval * 1e9);
	}
	if (OPT_HAS(o, flags)) {
		unsigned known = LEAKSNAP_START_REACHABILITY | LEAKSNAP_START_DUMP_ON_STOP |
				 LEAKSNAP_START_NO_EXIT_DUMP;
		if (o->flags & ~known)
			return -1;
		if (o->flags & LEAKSNAP_START_REACHABILITY)
			hook_cfg.reachability = true;
		if (o->flags & LEAKSNAP_START_NO_EXIT_DUMP)
			hook_cfg.dump_on_exit = false;
		inapp.flags = o->flags;
	}
	if (OPT_HAS(o, control) && o->control && hook_config_control(o->control) != 0)
		return -1;
	if (OPT_HAS(o, sample) && o->sample) {
		if (o->sample > LEAKSNAP_HOOK_SAMPLE_MAX)
			return -1;
		hook_cfg.sample = o->sample;
	}
	return 0;
}

/* Start and stop ------------------------------------------------------------- */

void inapp_register_atfork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void fork_handlers(void)
{
	if (pthread_key_create(&stripe_key, stripe_release) == 0)
		atomic_store(&stripe_key_ok, true);
	hook_register_atfork(); /* (the tables', then ours) */
}

static int start_locked(const struct leaksnap_options *opts)
{
	if (inapp.started) {
		errno = EALREADY;
		return -1;
	}
	if (getauxval(AT_SECURE)) {
		errno = ENOSYS;
		return -1;
	}
	/* The settings are checked before anything changes. */
	struct hook_config saved_cfg = hook_cfg;
	unsigned saved_flags = inapp.flags;
	inapp.flags = 0;
	const char *libs;
	if (apply_options(opts, &libs) != 0) {
		hook_cfg = saved_cfg;
		inapp.flags = saved_flags;
		errno = EINVAL;
		return -1;
	}
	if (libs && strlen(libs) >= sizeof(inapp.libs_text)) {
		hook_cfg = saved_cfg;
		errno = EINVAL;
		return -1;
	}
	inapp.have_re = libs && *libs;
	if (inapp.have_re && regcomp(&inapp.re, libs, REG_EXTENDED | REG_NOSUB) != 0) {
		hook_cfg = saved_cfg;
		inapp.have_re = false;
		errno = EINVAL;
		return -1;
	}
	strcpy(inapp.libs_text, libs ? libs : "");
	hook_busy++;
	if (hook_collect_begin() != 0) {
		hook_busy--;
		if (inapp.have_re)
			regfree(&inapp.re);
		inapp.have_re = false;
		errno = ENOMEM;
		return -1;
	}
	hook_busy--;
	clock_gettime(CLOCK_REALTIME, &inapp.started_at);
	inapp.started = true;
	atomic_store(&inapp_on, true);
	inapp_scan_locked();
	return 0;
}

/* Called where it would wait for itself: from a signal handler (or a
 * constructor) that interrupted this thread inside the in-app lock or an
 * entry point. */
static bool would_wait_on_self(void)
{
	struct inapp_stripe *me = inapp_mine;
	return inapp_lock_mine() || (me && atomic_load_explicit(&me->in, memory_order_relaxed) > 0);
}

EXPORT int leaksnap_start(const struct leaksnap_options *opts)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	if (would_wait_on_self()) {
		errno = EDEADLK;
		return -1;
	}
	pthread_once(&once, fork_handlers);
	inapp_resolve();
	inapp_lock();
	int rc = start_locked(opts);
	int e = errno;
	inapp_unlock();
	errno = e;
	return rc;
}

/* Wait until no thread is inside an entry point that saw collection on:
 * each stripe is seen at zero once after inapp_on went off (an entry that
 * counted itself in after that sees it off, and touches nothing). */
static void quiesce(void)
{
	barrier_all();
	for (struct inapp_stripe *s = atomic_load(&stripes); s; s = s->next) {
		for (unsigned spin = 0; atomic_load_explicit(&s->in, memory_order_acquire) > 0; spin++) {
			if (spin < 64)
				continue;
			struct timespec ts = {0, 100000};
			nanosleep(&ts, NULL);
		}
	}
}

EXPORT int leaksnap_stop(void)
{
	if (would_wait_on_self()) {
		errno = EDEADLK;
		return -1;
	}
	inapp_lock();
	if (!inapp.started) {
		inapp_unlock();
		errno = EINVAL;
		return -1;
	}
	if (inapp.flags & LEAKSNAP_START_DUMP_ON_STOP) {
		/* the last dump: no interval dump after it */
		dump_thread_end();
		dump_write(NULL, HOOK_TRIGGER_API);
	}
	atomic_store(&inapp_on, false);
	int left = inapp_unpatch_locked();
	quiesce();
	hook_busy++;
	hook_collect_end();
	hook_busy--;
	if (inapp.have_re)
		regfree(&inapp.re);
	inapp.have_re = false;
	inapp.started = false;
	inapp_forget_locked();
	inapp_unlock();
	errno = 0;
	return left;
}

/* LEAKSNAP_LIBS ------------------------------------------------------------ */

void inapp_load(void)
{
	stripes_init();
	const char *libs = getenv(LEAKSNAP_HOOK_ENV_LIBS);
	if (!libs)
		return;
	if (getauxval(AT_SECURE) || !hook_only_wanted())
		return;
	struct leaksnap_options o;
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.libs = libs;
	if (leaksnap_start(&o) != 0)
		hook_report(NULL, LEAKSNAP_HOOK_ENV_LIBS "=%s: %s; not collecting", libs,
			    errno == EINVAL ? "not a valid extended regular expression"
					    : strerror(errno));
}

/* Metadata ---------------------------------------------------------------- */

void inapp_meta(struct buf *meta)
{
	/* (a crash dump may interrupt a thread holding the lock: then the
	 * lists are left out rather than waited for) */
	bool mine = inapp_lock_mine(); /* (leaksnap_stop's last dump) */
	bool locked = mine || pthread_mutex_trylock(&lock) == 0;
	buf_printf(meta, "collector=inapp\n");
	buf_add(meta, "inapp_libs=", 11);
	buf_add_clean(meta, inapp.libs_text, strlen(inapp.libs_text));
	buf_add(meta, "\n", 1);
	buf_printf(meta, "inapp_started=%lld.%09ld\n", (long long)inapp.started_at.tv_sec,
		   inapp.started_at.tv_nsec);
	if (locked) {
		inapp_meta_modules_locked(meta);
		if (!mine)
			pthread_mutex_unlock(&lock);
	}
}

#endif
