/* Ground truth for reachability (tests/t-reach.sh, docs/reachability.md).
 *   reach LIBREACH.so [DUMP_PATH|- [wait|blockspin|sigwait|ownsig|noclone]]
 * Builds a heap whose every block's fate is known, prints the expected
 * "expect SIZE COUNT UNREACHABLE" per case and "expect-unreachable BYTES
 * BLOCKS", dumps through leaksnap_dump() when the hook is loaded (to
 * DUMP_PATH; "-": no API dump), then returns from main with everything
 * still in place (so that the exit dump, valgrind and LeakSanitizer see
 * the same heap).  "wait": first print "ready" and wait until standard
 * input ends (for dumps by signal); "blockspin": also run a thread that
 * blocks every signal and spins (a thread that cannot be stopped);
 * "sigwait": one that blocks every signal and takes them with sigwaitinfo
 * (it must never see the hook's stop signal: it exits 3 if it does);
 * "ownsig": install a handler of its own for SIGRTMAX-18 first;
 * "noclone": forbid clone() of processes (seccomp, EPERM) first;
 * "addrs": print "lost ADDRESS" for each S_LOST block as it is made.
 *
 * Each case has a size of its own, all multiples of 16: glibc's chunk
 * header of the next chunk then lies past the block's requested bytes
 * (see "limits" in docs/reachability.md).  Every pointer is made in a
 * noinline function and kept only where the case says; nothing the
 * compiler could keep on main's frame or in its callee-saved registers. */
#include <dlfcn.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "leakhook.h"

#define NOINLINE __attribute__((noinline))

enum {
	S_LOST = 2000,        /* x3: the last pointer overwritten */
	S_CYCLE = 2016,       /* x2: a cycle, its root lost */
	S_TREE_ROOT = 2032,   /* x1: a tree from a lost root */
	S_TREE_MID = 2048,    /* x2 */
	S_TREE_LEAF = 2064,   /* x4 */
	S_GLOBAL = 2080,      /* held by a global */
	S_DLSTATIC = 2096,    /* by a static of a dlopen'ed library */
	S_TLS_STATIC = 2112,  /* by main's __thread (static TLS) */
	S_TLS_DYN = 2128,     /* by the library's __thread (dynamic TLS) */
	S_THREAD_STACK = 2144, /* by a waiting thread's stack */
	S_THREAD_TLS = 2160,  /* by the waiting thread's __thread */
	S_INTERIOR = 2176,    /* only by a pointer into its middle */
	S_MMAP = 2192,        /* only by a word in an mmap'ed region (one
			       * touched page of 256 MiB reserved) */
	S_REGISTER = 2208,    /* only in a register of a running thread */
	S_CHAIN_HEAD = 2224,  /* global -> head -> tail */
	S_CHAIN_TAIL = 2240,
	S_BIG_INNER = 2256,   /* only by a word 2.5 MiB into the big block below */
	S_BIG_CHILD = 2272,   /* only by a word inside the lost big block */
	S_BIG_HELD = (3 << 20) + 48, /* mmap'ed by malloc: only by a pointer
				      * 2 MiB into it */
	S_BIG_LOST = (1 << 20) + 64, /* mmap'ed by malloc, lost */
	S_HUGE_INNER = 2288,  /* "huge": only by a word 4.5 GiB into a lost 5 GiB block */
	S_BETWEEN = 2416,     /* only by a word in a region the program mapped
			       * between two blocks malloc mapped, which the
			       * kernel merges into one mapping */
	S_BETWEEN_BIG = (2 << 20) + 80, /* x2: those two, held by a global */
};

static void *volatile g_lost;
static void *volatile g_global;
static void *volatile g_chain;
static char *volatile g_interior;
static char *volatile g_big_interior;
static char *volatile g_huge;
static __thread void *volatile t_keep;
static int wait_pipe[2], ready_pipe[2];
static atomic_int reg_ready, blocked;
static bool print_lost;

NOINLINE static void lose(void)
{
	for (int i = 0; i < 3; i++) {
		g_lost = malloc(S_LOST);
		memset(g_lost, 0x11, S_LOST);
		if (print_lost)
			printf("lost %p\n", g_lost);
	}
	g_lost = NULL;
}

NOINLINE static void cycle(void)
{
	void **a = malloc(S_CYCLE), **b = malloc(S_CYCLE);
	memset(a, 0, S_CYCLE);
	memset(b, 0, S_CYCLE);
	a[3] = b;
	b[5] = a;
	__asm__ volatile("" : : "r"(a), "r"(b) : "memory");
}

NOINLINE static void tree(void)
{
	void **root = calloc(1, S_TREE_ROOT);
	for (int i = 0; i < 2; i++) {
		void **mid = calloc(1, S_TREE_MID);
		root[i * 7] = mid;
		for (int j = 0; j < 2; j++)
			mid[j * 11 + 1] = calloc(1, S_TREE_LEAF);
	}
	__asm__ volatile("" : : "r"(root) : "memory");
}

NOINLINE static void held(void *lib)
{
	g_global = malloc(S_GLOBAL);
	void (*keep_static)(void *) = (void (*)(void *))dlsym(lib, "reach_keep_static");
	void (*keep_tls)(void *) = (void (*)(void *))dlsym(lib, "reach_keep_tls");
	if (!keep_static || !keep_tls) {
		fprintf(stderr, "reach: %s\n", dlerror());
		exit(2);
	}
	keep_static(malloc(S_DLSTATIC));
	keep_tls(malloc(S_TLS_DYN));
	t_keep = malloc(S_TLS_STATIC);
	g_interior = (char *)malloc(S_INTERIOR) + S_INTERIOR / 2 + 8;
	void **head = calloc(1, S_CHAIN_HEAD);
	head[S_CHAIN_HEAD / 2 / sizeof(void *)] = malloc(S_CHAIN_TAIL);
	g_chain = head;
}

/* Blocks big enough for malloc to map each on its own, far from the rest
 * of the heap: a pointer deep inside one must still find it. */
NOINLINE static void big(void)
{
	char *held = malloc(S_BIG_HELD);
	memset(held, 0, S_BIG_HELD);
	void *inner = malloc(S_BIG_INNER);
	memcpy(held + (5 << 19), &inner, sizeof(inner));
	g_big_interior = held + (2 << 20) + 8;
	char *lost = malloc(S_BIG_LOST);
	memset(lost, 0, S_BIG_LOST);
	void *child = malloc(S_BIG_CHILD);
	memcpy(lost + (3 << 18), &child, sizeof(child));
	__asm__ volatile("" : : "r"(lost), "r"(child), "r"(inner) : "memory");
}

/* A region the program maps between two blocks malloc maps on their own:
 * the kernel makes one mapping of the three, and the region, outside both
 * blocks, is still a root (the heap cut is each block's own pages, not the
 * span from the first to the last). */
static void *volatile g_between[2];
NOINLINE static void between(void)
{
	g_between[0] = malloc(S_BETWEEN_BIG);
	void **region = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	if (region == MAP_FAILED)
		exit(2);
	g_between[1] = malloc(S_BETWEEN_BIG);
	region[100] = malloc(S_BETWEEN);
	/* the region's address is kept nowhere, as in in_mmap() */
}

/* 256 MiB reserved, one page of it touched, far inside: the scan must find
 * the pointer without reading every page (docs/reachability.md). */
#define REGION (256u << 20)
NOINLINE static void in_mmap(void)
{
	void **region = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (region == MAP_FAILED)
		exit(2);
	region[(REGION / 5 * 4 + 1000) / sizeof(void *)] = malloc(S_MMAP);
	/* the region's address is kept nowhere: it is a root by itself */
}

/* "huge" (64-bit): a block of 5 GiB, past what the tables keep of a size
 * (32 bits), lost, holding the only pointer to a small block 4.5 GiB in:
 * both unreachable (were the block taken as its first 4 GiB, the rest of
 * its mapping would be a root that holds the small one).  Returns false
 * when malloc refuses it. */
NOINLINE static bool huge(void)
{
#if UINTPTR_MAX > 0xffffffffu
	char *h = malloc((size_t)5 << 30);
	if (!h)
		return false;
	void *inner = malloc(S_HUGE_INNER);
	memcpy(h + ((size_t)9 << 29), &inner, sizeof(inner));
	g_huge = h;
	g_huge = NULL;
	return true;
#else
	return false;
#endif
}

static void *waiter(void *arg)
{
	(void)arg;
	void *volatile on_stack = malloc(S_THREAD_STACK);
	t_keep = malloc(S_THREAD_TLS);
	char c = 1;
	if (write(ready_pipe[1], &c, 1) != 1)
		exit(2);
	/* blocked in read() until the process ends */
	while (read(wait_pipe[0], &c, 1) < 0)
		;
	return on_stack;
}

static void *sigwaiter(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	atomic_store(&blocked, 1);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&all, &si);
		if (sig > 0) {
			printf("sigwait got signal %d\n", sig);
			exit(3);
		}
	}
	return NULL;
}

/* Overwrite the dead stack below main's frame: no stale copy of a
 * pointer stays where a later frame might leave it uninitialized. */
NOINLINE static void scrub(void)
{
	volatile char junk[32768];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0;
}

static void *spinner(void *arg)
{
	(void)arg;
	void *p = malloc(S_REGISTER);
	__asm__ volatile("" : "+r"(p));
	/* malloc's dead frames lie right below: the red zone, which the scan
	 * takes with the stack */
	scrub();
	__asm__ volatile("" : "+r"(p));
	atomic_store(&reg_ready, 1);
	for (;;) {
		/* p stays in a (callee-saved) register across the call */
		__asm__ volatile("" : "+r"(p));
		sched_yield();
	}
	return p;
}

/* A seccomp filter: clone() without CLONE_THREAD fails with EPERM. */
static int forbid_fork(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

static void own_handler(int sig)
{
	(void)sig;
}

static void *blockspin(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	atomic_store(&blocked, 1);
	for (;;)
		__asm__ volatile("" ::: "memory");
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: reach LIBREACH.so [DUMP_PATH]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	print_lost = argc > 3 && !strcmp(argv[3], "addrs");
	void *lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "reach: %s\n", dlerror());
		return 2;
	}
	if (pipe(wait_pipe) || pipe(ready_pipe))
		return 2;
	pthread_t t1, t2;
	if (pthread_create(&t1, NULL, waiter, NULL) || pthread_create(&t2, NULL, spinner, NULL))
		return 2;
	char c;
	if (read(ready_pipe[0], &c, 1) != 1)
		return 2;
	while (!atomic_load(&reg_ready))
		sched_yield();
	lose();
	cycle();
	tree();
	held(lib);
	in_mmap();
	big();
	between();
	scrub();
	printf("expect %d 3 3\n", S_LOST);
	printf("expect %d 2 2\n", S_CYCLE);
	printf("expect %d 1 1\n", S_TREE_ROOT);
	printf("expect %d 2 2\n", S_TREE_MID);
	printf("expect %d 4 4\n", S_TREE_LEAF);
	printf("expect %d 1 1\n", S_BIG_LOST);
	printf("expect %d 1 1\n", S_BIG_CHILD);
	static const int kept[] = {S_GLOBAL, S_DLSTATIC, S_TLS_STATIC, S_TLS_DYN, S_THREAD_STACK,
				   S_THREAD_TLS, S_INTERIOR, S_MMAP, S_REGISTER, S_CHAIN_HEAD,
				   S_CHAIN_TAIL, S_BIG_HELD, S_BIG_INNER, S_BETWEEN};
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		printf("expect %d 1 0\n", kept[i]);
	printf("expect %d 2 0\n", S_BETWEEN_BIG);
	printf("expect-unreachable %d 14\n", 3 * S_LOST + 2 * S_CYCLE + S_TREE_ROOT +
						     2 * S_TREE_MID + 4 * S_TREE_LEAF + S_BIG_LOST +
						     S_BIG_CHILD);
	const char *mode = argc > 3 ? argv[3] : "";
	if (!strcmp(mode, "huge")) {
		bool made = huge();
		scrub();
		printf(made ? "huge %d\n" : "huge: malloc refused 5 GiB\n", S_HUGE_INNER);
	}
	if (!strcmp(mode, "blockspin") || !strcmp(mode, "sigwait")) {
		pthread_t t3;
		if (pthread_create(&t3, NULL, *mode == 'b' ? blockspin : sigwaiter, NULL))
			return 2;
		while (!atomic_load(&blocked))
			sched_yield();
	}
	if (!strcmp(mode, "ownsig"))
		signal(LEAKSNAP_HOOK_SIG_STOP, own_handler);
	if (!strcmp(mode, "noclone") && forbid_fork() != 0)
		return 2;
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	if (dump) {
		/* Under the hook only: a private file mapping whose second page
		 * lies past the end of the file (reading it is SIGBUS): the scan
		 * must survive it. */
		int fd = open(".", O_TMPFILE | O_RDWR, 0600);
		if (fd < 0)
			fd = open("/tmp", O_TMPFILE | O_RDWR, 0600);
		if (fd >= 0 && ftruncate(fd, 4096) == 0) {
			void *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
			if (m == MAP_FAILED)
				return 2;
		}
	}
	if (dump && argc > 2 && strcmp(argv[2], "-") && dump(argv[2]) != 0) {
		perror("leaksnap_dump");
		return 1;
	}
	if (!strcmp(mode, "wait") || !strcmp(mode, "blockspin") || !strcmp(mode, "sigwait")) {
		printf("ready\n");
		while (read(0, &c, 1) > 0)
			;
	}
	return 0;
}
