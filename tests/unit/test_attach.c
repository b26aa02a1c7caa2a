/* Unit tests for attach/, below `leaksnap attach`: the options struct as a
 * process of each pointer size lays it out, symbol addresses found in a
 * process's ELF files and maps (checked against this process's own
 * dynamic linker), a signal frame told from its look-alikes (this process's
 * own, from its handler), modules found in maps text, the explanations of a
 * refused ptrace, and the checks made before a process is touched. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach_internal.h"

/* ------------------------------------------------------------------------
 * The options' image
 * ------------------------------------------------------------------------ */

static void test_options_native(void **state)
{
	(void)state;
	struct leaksnap_options o = {
		.size = sizeof(o), .libs = "libfoo", .frames = 12, .unwind = "dwarf",
		.out = "/tmp/x", .interval = 0.25, .flags = 5, .sample = 65536,
	};
	uint8_t buf[256];
	size_t need = attach_options_image(&o, sizeof(void *), 0, NULL, 0);
	assert_int_equal(need, sizeof(o) + 7 + 6 + 7);
	uintptr_t base = (uintptr_t)buf;
	assert_int_equal(attach_options_image(&o, sizeof(void *), base, buf, sizeof(buf)), need);
	/* read back as this process's own struct: the same fields */
	struct leaksnap_options back;
	memcpy(&back, buf, sizeof(back));
	assert_int_equal(back.size, sizeof(o));
	assert_string_equal(back.libs, "libfoo");
	assert_int_equal(back.frames, 12);
	assert_string_equal(back.unwind, "dwarf");
	assert_string_equal(back.out, "/tmp/x");
	assert_true(back.interval == 0.25);
	assert_int_equal(back.flags, 5);
	assert_int_equal(back.sample, 65536);
	assert_ptr_equal(back.libs, (const char *)buf + sizeof(o));
	/* NULL strings stay NULL, and take no room */
	struct leaksnap_options d = {.size = sizeof(d)};
	assert_int_equal(attach_options_image(&d, sizeof(void *), base, buf, sizeof(buf)), sizeof(d));
	memcpy(&back, buf, sizeof(back));
	assert_null(back.libs);
	assert_null(back.unwind);
	assert_null(back.out);
	assert_int_equal(back.frames, 0);
	/* the control socket's setting, the last field */
	struct leaksnap_options c = {.size = sizeof(c), .control = "/s"};
	assert_int_equal(attach_options_image(&c, sizeof(void *), base, buf, sizeof(buf)),
			 sizeof(c) + 3);
	memcpy(&back, buf, sizeof(back));
	assert_string_equal(back.control, "/s");
	assert_null(back.libs);
	/* too small a buffer: only the size */
	assert_int_equal(attach_options_image(&o, 8, 0, buf, 10), need);
	assert_int_equal(attach_options_image(&o, 2, 0, buf, sizeof(buf)), 0);
}

/* A 32-bit ARM process's layout, byte for byte. */
static void test_options_ilp32(void **state)
{
	(void)state;
	struct leaksnap_options o = {
		.size = sizeof(o), .libs = "L", .frames = 3, .out = "/o", .interval = 2.0,
		.flags = 1, .sample = 0x10203,
	};
	uint8_t buf[64];
	size_t n = attach_options_image(&o, 4, 0x1000, buf, sizeof(buf));
	assert_int_equal(n, 48 + 2 + 3);
	static const uint8_t want[53] = {
		48, 0, 0, 0,             /* size */
		0x30, 0x10, 0, 0,        /* libs: 0x1000 + 48 */
		3, 0, 0, 0,              /* frames */
		0, 0, 0, 0,              /* unwind: NULL */
		0x32, 0x10, 0, 0,        /* out: 0x1000 + 50 */
		0, 0, 0, 0,              /* padding: the double is 8-aligned */
		0, 0, 0, 0, 0, 0, 0, 0x40, /* interval 2.0 */
		1, 0, 0, 0,              /* flags */
		0, 0, 0, 0,              /* control: NULL */
		3, 2, 1, 0, 0, 0, 0, 0,  /* sample */
		'L', 0, '/', 'o', 0,
	};
	assert_memory_equal(buf, want, sizeof(want));
}

/* ------------------------------------------------------------------------
 * Symbols in a process: this one
 * ------------------------------------------------------------------------ */

static struct attach_proc self;

static int read_self(void **state)
{
	(void)state;
	memset(&self, 0, sizeof(self));
	self.pid = getpid();
	snprintf(self.subject, sizeof(self.subject), "%d", self.pid);
	snprintf(self.root, sizeof(self.root), "/proc/%d/root", self.pid);
	FILE *f = fopen("/proc/self/maps", "r");
	if (f == NULL)
		return -1;
	size_t cap = 0;
	FILE *m = open_memstream(&self.maps, &cap);
	char line[8192];
	while (fgets(line, sizeof(line), f))
		fputs(line, m);
	fclose(f);
	fclose(m);
	self.maps_len = strlen(self.maps);
	return 0;
}

static int free_self(void **state)
{
	(void)state;
	attach_proc_release(&self);
	return 0;
}

/* The module file name of the C library this process runs with. */
static const char *libc_name(void)
{
	Dl_info di;
	static char name[256];
	/* (not malloc: a sanitizer's runtime defines one of its own) */
	if (!dladdr((void *)(uintptr_t)&__errno_location, &di) || di.dli_fname == NULL)
		return "libc.so.6";
	const char *slash = strrchr(di.dli_fname, '/');
	snprintf(name, sizeof(name), "%s", slash ? slash + 1 : di.dli_fname);
	return name;
}

static void test_module_symbol(void **state)
{
	(void)state;
	struct leaksnap_error err = {0};
	uint64_t addr = 0;
	/* what the dynamic linker says, for functions of the C library */
	static const char *const names[] = {"dlopen", "dlerror", "dlsym", "__errno_location",
					    "malloc"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *want = dlsym(RTLD_DEFAULT, names[i]);
		Dl_info di;
		if (want == NULL)
			continue; /* an older C library: dlopen is libdl's */
		if (!dladdr(want, &di) || !di.dli_fname || !strstr(di.dli_fname, libc_name()))
			continue; /* interposed (a sanitizer's malloc): not the C library's */
		assert_int_equal(attach_module_symbol(&self, libc_name(), names[i], &addr, &err), 0);
		assert_int_equal(addr, (uintptr_t)want);
	}
	/* absent: a symbol, a module */
	assert_int_equal(attach_module_symbol(&self, libc_name(), "no_such_symbol_xyz", &addr, &err), 1);
	assert_int_equal(attach_module_symbol(&self, "libnothere.so", "dlopen", &addr, &err), 1);
	assert_int_equal(err.code, LEAKSNAP_OK);
}

/* A function of this program itself, from its .symtab (a static one). */
static int local_function(int x)
{
	return x * 3 + 1;
}

static void test_program_symbol(void **state)
{
	(void)state;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	struct leaksnap_error err = {0};
	uint64_t addr = 0;
	int (*volatile fn)(int) = local_function;
	assert_int_equal(fn(1), 4);
	assert_int_equal(attach_module_symbol(&self, strrchr(exe, '/') + 1, "local_function", &addr,
					      &err),
			 0);
	assert_int_equal(addr, (uintptr_t)fn);
}

static void test_elf_facts(void **state)
{
	(void)state;
	struct attach_elf_facts f;
	assert_int_equal(attach_elf_facts("/proc/self/exe", &f), 0);
	assert_int_equal(f.cls, ARCH_CLASS);
	assert_int_equal(f.machine, ARCH_MACHINE);
	assert_true(f.interp);
	char path[] = "/tmp/leaksnap-test-attach.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	assert_int_equal(attach_elf_facts(path, &f), 1);
	unlink(path);
	errno = 0;
	assert_int_equal(attach_elf_facts("/nonexistent/lib.so", &f), -1);
	assert_int_equal(errno, ENOENT);
}

/* ------------------------------------------------------------------------
 * Signal frames (x86-64): this process's own, seen from its handler
 * ------------------------------------------------------------------------ */

#if defined(__x86_64__)
static volatile int frame_seen = -1, restorer_seen = -1, fake_frame = -1;

static __attribute__((noinline)) void on_signal(int sig)
{
	(void)sig;
	/* the handler's return address: the trampoline, at the frame's start */
	void **slot = (void **)__builtin_frame_address(0) + 1;
	uint8_t code[16];
	memcpy(code, *slot, sizeof(code));
	restorer_seen = arch_sigreturn(code);
	frame_seen = arch_signal_frame((const uint8_t *)slot, 4096, (uint64_t)(uintptr_t)slot);
	/* a word that only looks like it: what follows is not a context */
	uint64_t fake[64] = {(uint64_t)(uintptr_t)*slot};
	fake_frame = arch_signal_frame((const uint8_t *)fake, sizeof(fake),
				       (uint64_t)(uintptr_t)fake);
}
#endif

static void test_signal_frame(void **state)
{
	(void)state;
#if defined(__x86_64__)
	signal(SIGUSR2, on_signal);
	raise(SIGUSR2);
	signal(SIGUSR2, SIG_DFL);
	assert_int_equal(restorer_seen, 1);
	assert_int_equal(frame_seen, 1);
	assert_int_equal(fake_frame, 0);
	/* other code is not the trampoline */
	uint8_t code[16];
	memcpy(code, (const void *)(uintptr_t)&test_signal_frame, sizeof(code));
	assert_false(arch_sigreturn(code));
#else
	skip();
#endif
}

/* ------------------------------------------------------------------------
 * Maps text
 * ------------------------------------------------------------------------ */

static void test_find_module(void **state)
{
	(void)state;
	struct attach_proc p = {0};
	p.maps = strdup("55d000000000-55d000001000 r--p 00000000 08:01 12 /usr/bin/prog\n"
			"7f0000000000-7f0000001000 r-xp 00000000 08:01 13 /opt/my dir/libleakhook.so (deleted)\n"
			"7f0000002000-7f0000003000 rw-p 00000000 00:00 0 \n"
			"7f0000004000-7f0000005000 r-xp 00000000 08:01 14 /lib/libnotleakhook.so\n"
			"7f0000006000-7f0000007000 r-xp 00000000 08:01 15 /lib/libleakhook-inapp.so");
	p.maps_len = strlen(p.maps);
	char buf[256];
	assert_string_equal(attach_find_module(&p, "libleakhook.so", buf, sizeof(buf)),
			    "/opt/my dir/libleakhook.so");
	assert_string_equal(attach_find_module(&p, "libleakhook-inapp.so", buf, sizeof(buf)),
			    "/lib/libleakhook-inapp.so");
	assert_null(attach_find_module(&p, "libc.so.6", buf, sizeof(buf)));
	assert_null(attach_find_module(&p, "leakhook.so", buf, sizeof(buf)));
	assert_null(attach_find_module(&p, "libleakhook.so", buf, 8)); /* too long for buf */
	attach_proc_release(&p);
}

/* ------------------------------------------------------------------------
 * Why ptrace is refused
 * ------------------------------------------------------------------------ */

static void test_perm_reason(void **state)
{
	(void)state;
	char buf[512];
	struct attach_perm_facts f = {.ptrace_scope = 1, .uid = 1000, .target_uid = 0,
				      .dumpable = true};
	assert_string_equal(attach_perm_reason(&f, buf, sizeof(buf)),
			    "not permitted: the process runs as user 0 and leaksnap as user 1000; "
			    "tracing another user's process needs CAP_SYS_PTRACE (run leaksnap as "
			    "root or as that user)");
	f.target_uid = 1000;
	f.dumpable = false;
	assert_string_equal(attach_perm_reason(&f, buf, sizeof(buf)),
			    "not permitted: the process is not dumpable (a set-user-ID program, or it "
			    "called prctl(PR_SET_DUMPABLE, 0)); tracing it needs CAP_SYS_PTRACE (run "
			    "leaksnap as root)");
	f.dumpable = true;
	f.target_setid = true;
	assert_string_equal(attach_perm_reason(&f, buf, sizeof(buf)),
			    "not permitted: the process is not dumpable (a set-user-ID program, or it "
			    "called prctl(PR_SET_DUMPABLE, 0)); tracing it needs CAP_SYS_PTRACE (run "
			    "leaksnap as root)");
	f.target_setid = false;
	assert_string_equal(attach_perm_reason(&f, buf, sizeof(buf)),
			    "not permitted: kernel.yama.ptrace_scope is 1: a process may only trace "
			    "its own descendants (run leaksnap as root, give it CAP_SYS_PTRACE, or set "
			    "the sysctl kernel.yama.ptrace_scope=0)");
	f.is_parent = true;
	assert_string_equal(attach_perm_reason(&f, buf, sizeof(buf)),
			    "not permitted to trace it (a security module such as SELinux or "
			    "AppArmor may forbid it)");
	f.ptrace_scope = 2;
	assert_string_equal(attach_perm_reason(&f, buf, sizeof(buf)),
			    "not permitted: kernel.yama.ptrace_scope is 2: only a process with "
			    "CAP_SYS_PTRACE may trace (run leaksnap as root, or set the sysctl "
			    "kernel.yama.ptrace_scope=1)");
	f.cap_sys_ptrace = true;
	f.ptrace_scope = 3;
	assert_string_equal(attach_perm_reason(&f, buf, sizeof(buf)),
			    "not permitted: kernel.yama.ptrace_scope is 3: no process may be traced "
			    "until the next boot");
	/* with the capability, another user's process is no reason */
	f.ptrace_scope = -1;
	f.target_uid = 0;
	assert_string_equal(attach_perm_reason(&f, buf, sizeof(buf)),
			    "not permitted to trace it (a security module such as SELinux or "
			    "AppArmor may forbid it)");
}

/* ------------------------------------------------------------------------
 * Checks before anything is touched
 * ------------------------------------------------------------------------ */

static void test_proc_read_refusals(void **state)
{
	(void)state;
	struct attach_proc p;
	struct leaksnap_error err = {0};
	assert_int_equal(attach_proc_read(getpid(), &p, &err), -1);
	assert_string_equal(err.text, "that is leaksnap itself");
	attach_proc_release(&p);
	leaksnap_error_clear(&err);
	assert_int_equal(attach_proc_read(99999999, &p, &err), -1);
	assert_string_equal(err.source, "99999999");
	assert_string_equal(err.text, "no such process");
	attach_proc_release(&p);
	/* a zombie */
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	for (int i = 0; i < 500 && attach_thread_state(child) != 'Z'; i++)
		usleep(2000);
	leaksnap_error_clear(&err);
	assert_int_equal(attach_proc_read(child, &p, &err), -1);
	assert_string_equal(err.text, "the process has exited (a zombie)");
	attach_proc_release(&p);
	waitpid(child, NULL, 0);
}

static void test_lib_check(void **state)
{
	(void)state;
	struct leaksnap_error err = {0};
	struct attach_proc p = self;
	p.elf_class = ARCH_CLASS;
	p.elf_machine = ARCH_MACHINE;
	/* a file that is not there */
	assert_int_equal(attach_lib_check(&p, "/nonexistent/lib.so", &err), -1);
	assert_string_equal(err.source, "/nonexistent/lib.so");
	assert_string_equal(err.text, "No such file or directory");
	/* a library of another machine */
	p.elf_machine = ARCH_MACHINE + 1;
	Dl_info di;
	assert_true(dladdr((void *)(uintptr_t)&malloc, &di));
	leaksnap_error_clear(&err);
	assert_int_equal(attach_lib_check(&p, di.dli_fname, &err), -1);
	assert_non_null(strstr(err.text, "library cannot be loaded into process"));
	p.elf_machine = ARCH_MACHINE;
	leaksnap_error_clear(&err);
	assert_int_equal(attach_lib_check(&p, di.dli_fname, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options_native),
		cmocka_unit_test(test_options_ilp32),
		cmocka_unit_test_setup_teardown(test_module_symbol, read_self, free_self),
		cmocka_unit_test_setup_teardown(test_program_symbol, read_self, free_self),
		cmocka_unit_test(test_elf_facts),
		cmocka_unit_test(test_signal_frame),
		cmocka_unit_test(test_find_module),
		cmocka_unit_test(test_perm_reason),
		cmocka_unit_test(test_proc_read_refusals),
		cmocka_unit_test_setup_teardown(test_lib_check, read_self, free_self),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
