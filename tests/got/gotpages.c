/* The page checks of got_swap (gotcases.h): it never gives a page a
 * protection it did not have.  A slot whose value is not the one expected
 * leaves its page alone; a RELRO page the loader has not protected yet
 * (glibc lists a module while it relocates it) stays writable; a page
 * that is also executable (Android's 16 KiB compatibility mode maps code
 * and RELRO on one page) gets its r-x back, not r--; and a RELRO range
 * that ends mid-page (libgot-part.so: lld -z now with a 64-byte common
 * page size) leaves its partial page writable, as glibc left it. */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "got.h"
#include "gotcase_int.h"
#include "gotcases.h"

int gc_page_prot(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int prot = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && addr >= lo && addr < hi) {
			prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
			       (perms[2] == 'x' ? PROT_EXEC : 0);
			break;
		}
	}
	fclose(f);
	return prot;
}

void *gc_dlopen(const char *variant, struct dl_phdr_info *info)
{
	char path[4200];
	void *h;

	gc_lib_path(path, sizeof(path), variant);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		gotcase_note("dlopen %s: %s", path, dlerror());
		return NULL;
	}
	return gc_module_of(h, info) ? h : NULL;
}

static _Atomic unsigned page_fake_calls;

static void *page_fake_malloc(size_t n)
{
	page_fake_calls++;
	return malloc(n);
}

/* The first GLOB_DAT slot of malloc in @info (0: none). */
static uintptr_t malloc_glob_dat(const struct dl_phdr_info *info)
{
	struct slots s = { 0 };
	const char *why = NULL;

	if (got_find(info, gc_names, GC_NNAMES, gc_collect, &s, &why) != 0)
		return 0;
	for (unsigned i = 0; i < s.n && i < GC_MAX_SLOTS; i++)
		if (s.s[i].name == N_MALLOC && s.s[i].kind == GOT_GLOB_DAT)
			return s.s[i].addr;
	return 0;
}

/* A page given @prot by hand around the slot: got_swap must leave it so. */
static void swap_on(const struct dl_phdr_info *info, uintptr_t slot, int prot)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), at = slot & ~(page - 1);
	uintptr_t cur = *(const uintptr_t *)slot, fake = (uintptr_t)page_fake_malloc, found = 0;
	int st;

	GC_CHECK(mprotect((void *)at, page, prot) == 0);
	GC_CHECK(gc_page_prot(slot) == prot);
	/* not the value expected: 0, the value found, no page touched */
	st = got_swap(info, slot, cur ^ 0x1230, 0x5670, &found);
	GC_CHECK(st == 0);
	GC_CHECK(found == cur);
	GC_CHECK(gc_page_prot(slot) == prot);
	GC_CHECK(*(const uintptr_t *)slot == cur);
	/* swapped and swapped back: the same protection after each */
	GC_CHECK(got_swap(info, slot, cur, fake, &found) == 1);
	GC_CHECK(*(const uintptr_t *)slot == fake);
	GC_CHECK(gc_page_prot(slot) == prot);
	GC_CHECK(got_swap(info, slot, fake, cur, &found) == 1);
	GC_CHECK(*(const uintptr_t *)slot == cur);
	GC_CHECK(gc_page_prot(slot) == prot);
}

void gotcase_swap_pages(void)
{
	struct dl_phdr_info info;
	uintptr_t slot;
	void *h = gc_dlopen("now", &info);

	GC_CHECK(h != NULL);
	slot = malloc_glob_dat(&info);
	GC_CHECK(slot != 0);
	GC_CHECK(gc_page_prot(slot) == PROT_READ); /* -z now: on a RELRO page */
	/* as glibc leaves it while it relocates: writable */
	swap_on(&info, slot, PROT_READ | PROT_WRITE);
	/* code and RELRO on one page (16 KiB compatibility mode) */
	swap_on(&info, slot, PROT_READ | PROT_EXEC);
	/* as the loader left it */
	swap_on(&info, slot, PROT_READ);
	GC_CHECK(gc_page_prot(slot) == PROT_READ);
	/* the cost, for the log: one maps read and two mprotect a swap */
	{
		uintptr_t cur = *(const uintptr_t *)slot, fake = (uintptr_t)page_fake_malloc, found;
		struct timespec t0, t1;
		unsigned ok = 0;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (unsigned i = 0; i < 200; i++)
			ok += got_swap(&info, slot, i % 2 ? fake : cur, i % 2 ? cur : fake, &found) == 1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		GC_CHECK(ok == 200);
		GC_CHECK(*(const uintptr_t *)slot == cur);
		gotcase_note("got_swap on a read-only page: %.1f us each",
			     ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 200 / 1e3);
	}
}

/* libgot-part.so: RELRO ends mid-page.  glibc protects only whole pages
 * (end rounded down): the partial page stays writable, and a swap there
 * must keep it so; the library's calls reach the swapped-in function. */
void gotcase_swap_partial(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct dl_phdr_info info;
	struct slots s = { 0 };
	const char *why = NULL;
	uintptr_t end = 0, found, fake = (uintptr_t)page_fake_malloc;
	unsigned on_partial = 0, calls;
	void *h = gc_dlopen("part", &info);
	void *(*use_malloc)(size_t);
	void *p;

	GC_CHECK(h != NULL);
	use_malloc = (void *(*)(size_t))dlsym(h, "got_use_malloc");
	GC_CHECK(use_malloc != NULL);
	for (unsigned i = 0; i < info.dlpi_phnum; i++)
		if (info.dlpi_phdr[i].p_type == PT_GNU_RELRO)
			end = info.dlpi_addr + info.dlpi_phdr[i].p_vaddr + info.dlpi_phdr[i].p_memsz;
	GC_CHECK(end != 0);
	GC_CHECK(end % (uintptr_t)page != 0); /* what the library is built for */
	GC_CHECK(got_find(&info, gc_names, GC_NNAMES, gc_collect, &s, &why) == 0);
	GC_CHECK(s.n <= GC_MAX_SLOTS);
	for (unsigned i = 0; i < s.n; i++) {
		uintptr_t a = s.s[i].addr, cur = *(const uintptr_t *)a;
		int before = gc_page_prot(a);

		if (s.s[i].name != N_MALLOC || a >= end || a < (end & ~((uintptr_t)page - 1)))
			continue;
		on_partial++;
		GC_CHECK(before == (PROT_READ | PROT_WRITE));
		GC_CHECK(got_swap(&info, a, cur, fake, &found) == 1);
		GC_CHECK(gc_page_prot(a) == before);
		calls = page_fake_calls;
		if (s.s[i].kind != GOT_ABS) {
			p = use_malloc(8);
			free(p);
			GC_CHECK(page_fake_calls == calls + (s.s[i].kind == GOT_JUMP_SLOT));
		}
		GC_CHECK(got_swap(&info, a, fake, cur, &found) == 1);
		GC_CHECK(gc_page_prot(a) == before);
	}
	GC_CHECK(on_partial >= 2); /* malloc's JUMP_SLOT and GLOB_DAT, in RELRO with -z now */
}
