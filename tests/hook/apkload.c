/* Runs a library stored in an APK as Android's linker runs one, as far as
 * glibc allows (tests/t-android-apk.sh).  Android maps a library stored
 * uncompressed and page-aligned in an APK straight from the APK; glibc's
 * loader cannot, so this program dlopen()s an extracted copy of the same
 * bytes and then maps the APK over the copy's read-only segments (code,
 * headers, read-only data: bytes the loader never changes).  The kernel's
 * maps then name the APK, at the entry's offset plus each segment's, for
 * the code -- what a dump from a device shows.
 * Usage: apkload APK OFFSET LIB SIZE...
 *   LIB must hold exactly the APK's bytes at OFFSET (checked); calls the
 *   library's apk_leak(SIZE) for each SIZE, exits 0 (1 on any failure).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct target {
	const char *lib;
	int apk;
	off_t offset;
	int mapped, failed;
};

static int remap(struct dl_phdr_info *info, size_t size, void *data)
{
	struct target *t = data;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	(void)size;
	if (strcmp(info->dlpi_name, t->lib) != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
			continue;
		uintptr_t start = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		uintptr_t end = info->dlpi_addr + ph->p_vaddr + ph->p_filesz;
		size_t len = (end - start + page - 1) & ~(page - 1);
		off_t off = t->offset + (off_t)(ph->p_offset & ~(page - 1));
		int prot = ((ph->p_flags & PF_R) ? PROT_READ : 0) |
			   ((ph->p_flags & PF_X) ? PROT_EXEC : 0);
		if (mmap((void *)start, len, prot, MAP_PRIVATE | MAP_FIXED, t->apk, off) ==
		    MAP_FAILED) {
			perror("apkload: mmap");
			t->failed = 1;
			return 1;
		}
		t->mapped++;
	}
	return 1;
}

/* The whole of @lib equals the APK's bytes at @offset. */
static int same_bytes(int apk, off_t offset, const char *lib)
{
	int fd = open(lib, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0)
		return 0;
	char a[4096], b[4096];
	for (off_t at = 0; at < st.st_size;) {
		size_t n = st.st_size - at < (off_t)sizeof(a) ? (size_t)(st.st_size - at)
							      : sizeof(a);
		if (pread(fd, a, n, at) != (ssize_t)n ||
		    pread(apk, b, n, offset + at) != (ssize_t)n || memcmp(a, b, n) != 0) {
			close(fd);
			return 0;
		}
		at += (off_t)n;
	}
	close(fd);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: apkload APK OFFSET LIB SIZE...\n");
		return 1;
	}
	struct target t = {argv[3], open(argv[1], O_RDONLY), (off_t)strtoll(argv[2], NULL, 0), 0,
			   0};
	if (t.apk < 0 || !same_bytes(t.apk, t.offset, t.lib)) {
		fprintf(stderr, "apkload: %s is not the entry at %s of %s\n", t.lib, argv[2],
			argv[1]);
		return 1;
	}
	void *h = dlopen(t.lib, RTLD_NOW);
	void *(*leak)(size_t) = h ? (void *(*)(size_t))dlsym(h, "apk_leak") : NULL;
	if (!leak) {
		fprintf(stderr, "apkload: %s\n", dlerror());
		return 1;
	}
	dl_iterate_phdr(remap, &t);
	if (t.failed || t.mapped == 0) {
		fprintf(stderr, "apkload: no read-only segment of %s mapped from the APK\n", t.lib);
		return 1;
	}
	for (int i = 4; i < argc; i++)
		leak((size_t)strtoul(argv[i], NULL, 0));
	close(t.apk);
	return 0;
}
