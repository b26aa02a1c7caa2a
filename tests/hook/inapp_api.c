/* The in-app API program (t-inapp.sh): it loads libleakhook-inapp.so with
 * dlopen(RTLD_LOCAL), as Android's System.loadLibrary does, and calls
 * leaksnap_start() and leaksnap_stop() itself, watching its own
 * allocations (libs "/inapp_api$").
 *
 *   inapp_api api HOOK OUT              start/stop errors, restart, slots put back
 *   inapp_api foreign HOOK OUT LEAKER   blocks the hook did not see, freed or grown
 *   inapp_api reload HOOK OUT LEAKER    LEAKER unloaded unseen, loaded again in place
 *   inapp_api reloadraw HOOK OUT LEAKER the same, loaded again unseen too
 *   inapp_api tamper HOOK OUT           a slot changed by someone else is left so
 *   inapp_api stop HOOK OUT             the interval, the dump at stop, the signals
 *   inapp_api threads HOOK OUT          8 allocating threads, start/stop in a loop
 *   inapp_api later HOOK OUT DIR        libraries loaded after start (DIR/libinappdl.so)
 *   inapp_api unwatched HOOK OUT DIR    the same loaded without a start
 *   inapp_api jni HOOK OUT DIR          DIR/libinappjni.so starts the hook as it loads
 *   inapp_api cxx HOOK OUT DIR          a C++ plug-in loaded RTLD_LOCAL (no start)
 *
 *   inapp_api filterclear HOOK OUT      a restart clears the filter of sampled
 *                                       blocks by giving its pages back
 *
 * Everything it prints is compared exactly; OUT is the dump prefix, and
 * each scenario writes OUT.NAME.dump with leaksnap_dump(). */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "leakhook.h"

static int (*start)(const struct leaksnap_options *);
static int (*stop)(void);
static int (*dump)(const char *);
static const char *out;
static void *hook;
static void *volatile keep[16];

static const char *err_name(int e)
{
	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EALREADY: return "EALREADY";
	case ENOSYS: return "ENOSYS";
	default: return strerror(e);
	}
}

static void say(const char *what, int rc)
{
	printf("%s: %d %s\n", what, rc, rc < 0 ? err_name(errno) : "");
}

static struct leaksnap_options opts(const char *libs)
{
	struct leaksnap_options o;
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.libs = libs;
	o.out = out;
	o.flags = LEAKSNAP_START_NO_EXIT_DUMP;
	return o;
}

static void dump_as(const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s.%s.dump", out, name);
	if (dump(path) != 0)
		printf("dump %s: %s\n", name, strerror(errno));
}

/* The program's own GOT slot for @name (its jump slot or GLOB_DAT), found
 * the way the hook's patcher does, or NULL. */
static int find_slot(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	void **want = data;
	const char *name = *(const char **)want;
	const ElfW(Dyn) *dyn = NULL;
	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Rela) *tabs[2] = {NULL, NULL};
	size_t sizes[2] = {0, 0};
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn->d_un.d_ptr; break;
		case DT_STRTAB: strtab = (const char *)dyn->d_un.d_ptr; break;
		case DT_RELA: tabs[0] = (const ElfW(Rela) *)dyn->d_un.d_ptr; break;
		case DT_RELASZ: sizes[0] = dyn->d_un.d_val; break;
		case DT_JMPREL: tabs[1] = (const ElfW(Rela) *)dyn->d_un.d_ptr; break;
		case DT_PLTRELSZ: sizes[1] = dyn->d_un.d_val; break;
		default: break;
		}
	}
	for (int t = 0; t < 2; t++)
		for (size_t i = 0; tabs[t] && i < sizes[t] / sizeof(ElfW(Rela)); i++) {
			size_t sym = ELF64_R_SYM(tabs[t][i].r_info);
			if (sym && !strcmp(strtab + symtab[sym].st_name, name)) {
				want[1] = (void *)(info->dlpi_addr + tabs[t][i].r_offset);
				return 1;
			}
		}
	return 1; /* (the first module is the program) */
}

static uintptr_t *slot_of(const char *name)
{
	void *want[2] = {(void *)name, NULL};
	dl_iterate_phdr(find_slot, want);
	return want[1];
}

static void slot_write(uintptr_t *slot, uintptr_t v)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	void *pg = (void *)((uintptr_t)slot & ~(page - 1));
	mprotect(pg, page, PROT_READ | PROT_WRITE);
	*slot = v;
}

/* api ------------------------------------------------------------------------ */

__attribute__((noinline)) static void api_leak(size_t n)
{
	keep[0] = malloc(n);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void api_leak_again(size_t n)
{
	keep[1] = calloc(1, n);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static int run_api(void)
{
	uintptr_t *ms = slot_of("malloc");
	if (!ms) {
		printf("no malloc slot\n");
		return 1;
	}
	uintptr_t before = *ms;
	say("stop before start", stop());
	struct leaksnap_options o = opts("/inapp_api$");
	/* bad options: nothing starts, nothing changes */
	struct leaksnap_options bad = o;
	bad.size = 0;
	say("size 0", start(&bad));
	bad = o;
	bad.frames = 257;
	say("frames 257", start(&bad));
	bad = o;
	bad.unwind = "sideways";
	say("unwind sideways", start(&bad));
	bad = o;
	bad.libs = "(";
	say("libs (", start(&bad));
	bad = o;
	bad.flags = 0x100;
	say("flags 0x100", start(&bad));
	bad = o;
	bad.interval = -1;
	say("interval -1", start(&bad));
	printf("slot unchanged: %s\n", *ms == before ? "yes" : "no");
	say("stop after bad starts", stop());

	say("start", start(&o));
	uintptr_t patched = *ms;
	printf("slot patched: %s\n", patched != before ? "yes" : "no");
	say("start again", start(&o));
	struct leaksnap_options other = opts("nothing-matches-this");
	say("start other", start(&other));
	printf("slot same: %s\n", *ms == patched ? "yes" : "no");
	api_leak(2001);
	dump_as("api1");
	say("stop", stop());
	printf("slot restored: %s\n", *ms == before ? "yes" : "no");
	say("stop again", stop());

	/* again, with 4 frames: a fresh table */
	struct leaksnap_options o4 = o;
	o4.frames = 4;
	say("restart", start(&o4));
	api_leak_again(2002);
	dump_as("api2");
	say("stop", stop());
	printf("slot restored: %s\n", *ms == before ? "yes" : "no");
	free(keep[0]);
	free(keep[1]);

	/* unloaded while started (a dlclose the library refuses: it stays) */
	say("start before dlclose", start(&o));
	printf("dlclose: %d\n", dlclose(hook));
	for (int i = 0; i < 1000; i++)
		free(malloc((size_t)i + 1));
	printf("allocating after dlclose: ok\n");
	return 0;
}

/* foreign --------------------------------------------------------------------- */

__attribute__((noinline)) static void *foreign_realloc(void *p, size_t n)
{
	void *q = realloc(p, n);
	__asm__ volatile("" ::: "memory");
	return q;
}

static int run_foreign(const char *leaker)
{
	void *h = dlopen(leaker, RTLD_NOW);
	void *(*leaker_alloc)(size_t) = h ? (void *(*)(size_t))dlsym(h, "leaker_alloc") : NULL;
	void (*leaker_free)(void *) = h ? (void (*)(void *))dlsym(h, "leaker_free") : NULL;
	if (!leaker_alloc || !leaker_free) {
		printf("dlopen %s: %s\n", leaker, dlerror());
		return 1;
	}
	void *pre = malloc(3001), *pre2 = malloc(3003);
	struct leaksnap_options o = opts("/inapp_api$");
	say("start", start(&o));
	void *theirs = leaker_alloc(3002); /* a library not watched */
	free(pre);                         /* allocated before start */
	free(theirs);                      /* allocated by a library not watched */
	void *grown = foreign_realloc(pre2, 3004); /* realloc of a block not seen */
	leaker_free(malloc(3005)); /* ours, freed by a library not watched: gone */
	keep[2] = grown;
	dump_as("foreign");
	say("stop", stop());
	free(grown);
	return 0;
}

/* reload ---------------------------------------------------------------------- */

/* A watched library unloaded behind the hook's back (dlclose through a
 * pointer from dlsym: no patched slot sees it) and loaded again where it
 * was: the new load is patched as a new module, not taken for the old
 * one.  (The loader puts it back at the same address, its link map in
 * the same memory, as a rule: "same place" says whether it did.) */
__attribute__((noinline)) static int run_reload(const char *leaker, bool raw)
{
	int (*raw_dlclose)(void *) = (int (*)(void *))dlsym(RTLD_DEFAULT, "dlclose");
	void *(*raw_dlopen)(const char *, int) =
		(void *(*)(const char *, int))dlsym(RTLD_DEFAULT, "dlopen");
	void *h = dlopen(leaker, RTLD_NOW);
	void *(*alloc1)(size_t) = h ? (void *(*)(size_t))dlsym(h, "leaker_alloc") : NULL;
	if (!alloc1 || !raw_dlclose) {
		printf("dlopen %s: %s\n", leaker, dlerror());
		return 1;
	}
	struct leaksnap_options o = opts("/libleaker\\.so$");
	say("start", start(&o));
	keep[4] = alloc1(3101);
	printf("unloaded: %d\n", raw_dlclose(h));
	void *h2 = raw ? raw_dlopen(leaker, RTLD_NOW) : dlopen(leaker, RTLD_NOW);
	void *(*alloc2)(size_t) = h2 ? (void *(*)(size_t))dlsym(h2, "leaker_alloc") : NULL;
	if (!alloc2) {
		printf("dlopen again %s: %s\n", leaker, dlerror());
		return 1;
	}
	printf("same place: %s\n", alloc2 == alloc1 ? "yes" : "no");
	keep[5] = alloc2(3102);
	dump_as("reload");
	say("stop", stop());
	free(keep[4]);
	free(keep[5]);
	dlclose(h2);
	return 0;
}

/* tamper ---------------------------------------------------------------------- */

static int run_tamper(void)
{
	uintptr_t *ms = slot_of("malloc"), *cs = slot_of("calloc"), *fs = slot_of("free");
	if (!ms || !cs || !fs) {
		printf("slots missing\n");
		return 1;
	}
	keep[3] = calloc(1, 8); /* (every slot bound before it is read) */
	free(keep[3]);
	uintptr_t m0 = *ms, c0 = *cs, f0 = *fs;
	struct leaksnap_options o = opts("/inapp_api$");
	say("start", start(&o));
	printf("patched: %s\n", *ms != m0 && *cs != c0 && *fs != f0 ? "yes" : "no");
	uintptr_t mine = c0;
	slot_write(cs, mine); /* someone else puts calloc back meanwhile */
	say("stop", stop());
	printf("malloc restored: %s\n", *ms == m0 ? "yes" : "no");
	printf("free restored: %s\n", *fs == f0 ? "yes" : "no");
	printf("calloc left as set: %s\n", *cs == mine ? "yes" : "no");
	return 0;
}

/* threads --------------------------------------------------------------------- */

#define THREADS 8
#define KEEP_EACH 100
static atomic_int phase; /* 0 churn, 1 keep, 2 done */
static atomic_int kept;

__attribute__((noinline)) static void thread_keep(void **into)
{
	for (int i = 0; i < KEEP_EACH; i++)
		into[i] = malloc(4005);
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	uint32_t x = (uint32_t)(uintptr_t)arg * 2654435761u + 1;
	void *ring[16] = {0};
	unsigned k = 0;
	while (atomic_load(&phase) == 0) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		free(ring[k % 16]);
		switch (x % 4) {
		case 0: ring[k % 16] = malloc(1 + x % 512); break;
		case 1: ring[k % 16] = calloc(1, 1 + x % 256); break;
		case 2: ring[k % 16] = realloc(malloc(16), 1 + x % 700); break;
		default: {
			void *p = NULL;
			ring[k % 16] = posix_memalign(&p, 64, 1 + x % 300) == 0 ? p : NULL;
		}
		}
		k++;
	}
	for (unsigned i = 0; i < 16; i++)
		free(ring[i]);
	while (atomic_load(&phase) == 1)
		;
	void **mine = malloc(KEEP_EACH * sizeof(void *));
	thread_keep(mine);
	atomic_fetch_add(&kept, 1);
	return mine;
}

static int run_threads(void)
{
	pthread_t t[THREADS];
	struct leaksnap_options o = opts("/inapp_api$");
	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i + 1));
	int bad = 0;
	for (int round = 0; round < 200; round++) {
		if (start(&o) != 0)
			bad++;
		struct timespec ts = {0, 200000};
		nanosleep(&ts, NULL);
		if (stop() != 0)
			bad++;
	}
	printf("start/stop failures: %d\n", bad);
	atomic_store(&phase, 1);
	struct timespec ts = {0, 20000000};
	nanosleep(&ts, NULL);
	say("start", start(&o));
	atomic_store(&phase, 2);
	void *blocks[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], &blocks[i]);
	dump_as("threads");
	say("stop", stop());
	for (int i = 0; i < THREADS; i++) {
		void **b = blocks[i];
		for (int k = 0; k < KEEP_EACH; k++)
			free(b[k]);
		free(b);
	}
	printf("threads kept: %d\n", atomic_load(&kept));
	return 0;
}

/* stop: its dump, the interval and the signals end ---------------------------- */

static int count_dumps(void)
{
	char pat[4200];
	snprintf(pat, sizeof(pat), "%s.%d.", out, (int)getpid());
	const char *slash = strrchr(out, '/');
	char dir[4096];
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - out) : 1, slash ? out : ".");
	const char *base = strrchr(pat, '/') ? strrchr(pat, '/') + 1 : pat;
	int n = 0;
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));)
		if (!strncmp(e->d_name, base, strlen(base)) && strstr(e->d_name, ".dump") &&
		    !strstr(e->d_name, ".tmp"))
			n++;
	if (d)
		closedir(d);
	return n;
}

static bool dump_signal_default(void)
{
	struct sigaction sa;
	return sigaction(SIGRTMAX - LEAKSNAP_HOOK_SIG_DUMP_OFFSET, NULL, &sa) == 0 &&
	       !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL;
}

static int run_stop(void)
{
	struct leaksnap_options o = opts("/inapp_api$");
	o.interval = 0.05;
	o.flags |= LEAKSNAP_START_DUMP_ON_STOP;
	printf("dump signal default before: %s\n", dump_signal_default() ? "yes" : "no");
	say("start", start(&o));
	printf("dump signal default while started: %s\n", dump_signal_default() ? "yes" : "no");
	api_leak(2003);
	struct timespec ts = {0, 400000000};
	nanosleep(&ts, NULL);
	int n1 = count_dumps();
	printf("interval dumps: %s\n", n1 >= 3 ? "yes" : "no");
	say("stop", stop());
	int n2 = count_dumps();
	printf("a dump at stop: %s\n", n2 >= n1 + 1 ? "yes" : "no");
	printf("dump signal default after: %s\n", dump_signal_default() ? "yes" : "no");
	nanosleep(&ts, NULL);
	printf("no dumps after stop: %s\n", count_dumps() == n2 ? "yes" : "no");
	return 0;
}

/* later ------------------------------------------------------------------------ */

/* The protections of the mappings of the files whose path ends in @name,
 * one word, in address order. */
static void print_perms(const char *name)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4352], perms[8];
	printf("%s:", name);
	while (f && fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n >= strlen(name) && !strcmp(line + n - strlen(name), name) &&
		    sscanf(line, "%*s %7s", perms) == 1)
			printf(" %s", perms);
	}
	printf("\n");
	if (f)
		fclose(f);
}

/* With @watch, started on the two libraries before they are loaded. */
static int load_later(const char *dir, bool watch)
{
	struct leaksnap_options o = opts("libinapp(dl|plug)\\.so$");
	if (watch)
		say("start", start(&o));
	char path[4096];
	snprintf(path, sizeof(path), "%s/libinappdl.so", dir);
	void *h = dlopen(path, RTLD_LAZY);
	if (!h) {
		printf("dlopen %s: %s\n", path, dlerror());
		return 1;
	}
	void *(*fn[5])(size_t) = {
		(void *(*)(size_t))dlsym(h, "inappdl_alloc"),
		(void *(*)(size_t))dlsym(h, "inappdl_call_plug"),
		(void *(*)(size_t))dlsym(h, "inappdl_alloc_ptr"),
		(void *(*)(size_t))dlsym(h, "inappdl_alloc_data"),
		(void *(*)(size_t))dlsym(h, "inappdl_alloc_relro"),
	};
	for (int i = 0; i < 5; i++)
		keep[4 + i] = fn[i](5001 + (size_t)i);
	printf("plug loaded: %s\n", keep[5] ? "yes" : "no");
	if (watch) {
		dump_as("later");
		say("stop", stop());
	}
	print_perms("/libinappdl.so");
	print_perms("/libinappplug.so");
	return 0;
}

/* cxx ---------------------------------------------------------------------------- */

/* The C++ plug-in, loaded RTLD_LOCAL; no start (LEAKSNAP_LIBS, or the
 * preload hook, does it). */
static int run_cxx(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/libinappcxx.so", dir);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen %s: %s\n", path, dlerror());
		return 1;
	}
	static const char *const fns[] = {"cxxplug_leak_array", "cxxplug_leak_object",
					  "cxxplug_leak_aligned", "cxxplug_leak_nothrow",
					  "cxxplug_churn"};
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void (*fn)(void) = (void (*)(void))dlsym(h, fns[i]);
		if (!fn) {
			printf("%s missing\n", fns[i]);
			return 1;
		}
		fn();
	}
	printf("global operator new: %s\n", dlsym(RTLD_DEFAULT, "_Znwm") ? "found" : "none");
	return 0;
}

/* sample ------------------------------------------------------------------------ */

/* Sampled collection by the options (the program's own allocations):
 * an interval over the limit is refused, then 65536 with a seed. */
__attribute__((noinline)) static void sample_small(void)
{
	for (int i = 0; i < 1000; i++)
		keep[12 + i % 3] = malloc(64);
	__asm__ volatile("" ::: "memory");
}

static int run_sample(void)
{
	struct leaksnap_options o = opts(NULL);
	o.sample = 1073741825;
	say("start sample=1073741825", start(&o));
	o.sample = 65536;
	setenv("LEAKSNAP_SAMPLE_SEED", "5", 1);
	say("start sample=65536", start(&o));
	keep[15] = malloc(70000);
	sample_small();
	dump_as("sample");
	say("stop", stop());
	return 0;
}

/* An in-app stop then start with another interval: the counters of the
 * session before (a distance of up to 1 GiB drawn by one allocation) are
 * not kept; twenty blocks of 100000 bytes, 4096-byte sampling and then
 * full tracking, are all recorded. */
static void *volatile restart_keep[40];
__attribute__((noinline)) static void restart_big(int k)
{
	for (int i = 0; i < 20; i++)
		restart_keep[k * 20 + i] = malloc(100000 + k);
	__asm__ volatile("" ::: "memory");
}

static int run_restart(void)
{
	struct leaksnap_options o = opts(NULL);
	static const uint64_t second[] = {4096, 0};
	static const char *const name[] = {"restart1", "restart2"};
	static const char *const what[] = {"start sample=4096", "start sample=0"};
	for (int k = 0; k < 2; k++) {
		o.sample = 1u << 30;
		say("start sample=1073741824", start(&o));
		keep[15] = malloc(16);
		say("stop", stop());
		o.sample = second[k];
		say(what[k], start(&o));
		restart_big(k);
		dump_as(name[k]);
		say("stop", stop());
	}
	return 0;
}

/* The resident pages of this process, from /proc/self/statm (read with
 * system calls: nothing allocated). */
static long resident_pages(void)
{
	char buf[128];
	long size = 0, res = -1;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = 0;
			if (sscanf(buf, "%ld %ld", &size, &res) != 2)
				res = -1;
		}
		close(fd);
	}
	return res;
}

/* A restart after the filter of sampled blocks grew large (200,000 blocks
 * sampled at 1 byte: 4,194,304 counters, 16 MiB): the next session's filter
 * is the largest cleared, its pages given back rather than written (the
 * resident memory falls by most of 16 MiB), and it works: the new
 * session's blocks are recorded and their frees found. */
#define CLEAR_BLOCKS 200000
static void *clear_keep[CLEAR_BLOCKS];
__attribute__((noinline)) static void clear_after(void)
{
	for (int i = 0; i < 10; i++)
		restart_keep[i] = malloc(100000);
	for (int i = 0; i < 5; i++)
		free(restart_keep[i]);
	__asm__ volatile("" ::: "memory");
}

static int run_filterclear(void)
{
	struct leaksnap_options o = opts(NULL);
	o.sample = 1;
	say("start sample=1", start(&o));
	for (int i = 0; i < CLEAR_BLOCKS; i++)
		clear_keep[i] = malloc(16);
	say("stop", stop());
	for (int i = 0; i < CLEAR_BLOCKS; i++)
		free(clear_keep[i]);
	long before = resident_pages();
	o.sample = 4096;
	say("start sample=4096", start(&o));
	long after = resident_pages(), page = sysconf(_SC_PAGESIZE);
	printf("filter pages given back: %s\n",
	       before > 0 && after > 0 && (before - after) * page >= 8L << 20 ? "yes" : "no");
	clear_after();
	dump_as("filterclear");
	say("stop", stop());
	return 0;
}

/* jni --------------------------------------------------------------------------- */

/* A library that starts the hook on itself while being loaded. */
static int run_jni(const char *hook_path, const char *dir)
{
	setenv("INAPP_HOOK", hook_path, 1);
	setenv("INAPP_OUT", out, 1);
	char path[4096];
	snprintf(path, sizeof(path), "%s/libinappjni.so", dir);
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		printf("dlopen %s: %s\n", path, dlerror());
		return 1;
	}
	printf("started at load: %d\n", *(int *)dlsym(h, "jni_started"));
	void *(*alloc)(size_t) = (void *(*)(size_t))dlsym(h, "jni_alloc");
	keep[10] = alloc(6001);
	keep[11] = malloc(6002); /* (the program's own: not watched) */
	dump_as("jni");
	say("stop", stop());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: inapp_api SCENARIO HOOK OUT [ARG]\n");
		return 2;
	}
	hook = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	if (!hook) {
		printf("dlopen hook: %s\n", dlerror());
		return 1;
	}
	start = (int (*)(const struct leaksnap_options *))dlsym(hook, "leaksnap_start");
	stop = (int (*)(void))dlsym(hook, "leaksnap_stop");
	dump = (int (*)(const char *))dlsym(hook, "leaksnap_dump");
	/* RTLD_LOCAL: nothing of the hook is visible by name */
	printf("global lookup: %s\n", dlsym(RTLD_DEFAULT, "leaksnap_start") ? "found" : "none");
	out = argv[3];
	setvbuf(stdout, NULL, _IONBF, 0);
	const char *s = argv[1];
	if (!strcmp(s, "api"))
		return run_api();
	if (!strcmp(s, "foreign") && argc > 4)
		return run_foreign(argv[4]);
	if (!strcmp(s, "reload") && argc > 4)
		return run_reload(argv[4], false);
	if (!strcmp(s, "reloadraw") && argc > 4)
		return run_reload(argv[4], true);
	if (!strcmp(s, "tamper"))
		return run_tamper();
	if (!strcmp(s, "stop"))
		return run_stop();
	if (!strcmp(s, "threads"))
		return run_threads();
	if (!strcmp(s, "later") && argc > 4)
		return load_later(argv[4], true);
	if (!strcmp(s, "cxx") && argc > 4)
		return run_cxx(argv[4]);
	if (!strcmp(s, "sample"))
		return run_sample();
	if (!strcmp(s, "restart"))
		return run_restart();
	if (!strcmp(s, "filterclear"))
		return run_filterclear();
	if (!strcmp(s, "jni") && argc > 4)
		return run_jni(argv[2], argv[4]);
	if (!strcmp(s, "unwatched") && argc > 4)
		return load_later(argv[4], false);
	fprintf(stderr, "inapp_api: unknown scenario %s\n", s);
	return 2;
}
