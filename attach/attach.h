/* leaksnap attach: loading the in-app hook into a running process
 * (docs/attach.md).
 *
 * With ptrace and nothing else (no debugger): the process's main thread is
 * stopped (PTRACE_SEIZE + PTRACE_INTERRUPT) at a point where it holds no
 * lock of the C library, its registers and errno are saved, the loader's
 * dlopen() is called in it and then the hook's leaksnap_start() (or
 * leaksnap_stop(), leaksnap_dump()), and everything is put back before it
 * is let go.  Symbol addresses come from the process's own ELF files, read
 * through /proc/PID/root with libelf, and the load addresses in its maps.
 *
 * The driver prints nothing and never exits: every function returns 0 or
 * -1 with a caller-owned struct leaksnap_error filled, whose source is the
 * subject of the message (the process id, or the library's path) and whose
 * text says what is wrong in the user's terms.  The target is left exactly
 * as it was whenever a check fails before the library is loaded. */
#ifndef LEAKSNAP_ATTACH_H
#define LEAKSNAP_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <leaksnap/error.h>
#include <leaksnap/leakhook.h>

/* What attach learns about a process before it touches it. */
struct attach_proc {
	int pid;               /* the process (its thread-group id) */
	char subject[24];      /* "PID", how messages name it */
	char root[48];         /* "/proc/PID/root": the process's view of "/" */
	unsigned elf_class;    /* ELFCLASS32 / ELFCLASS64 of its executable */
	unsigned elf_machine;  /* e_machine of its executable */
	char *maps;            /* its /proc/PID/maps text (owned) */
	size_t maps_len;
	char preload_hook[4096]; /* the path of a mapped libleakhook.so, or "" */
};

/* Read what attaching needs to know about process @pid, and refuse what
 * cannot be attached to: no such process; not permitted (naming
 * kernel.yama.ptrace_scope, CAP_SYS_PTRACE, another user's process, a
 * process that is not dumpable); a process stopped by job control; a
 * statically linked program; a program of another architecture than
 * leaksnap's own.  0, or -1 with @err filled.  Release with
 * attach_proc_release() either way. */
int attach_proc_read(int pid, struct attach_proc *p, struct leaksnap_error *err);
void attach_proc_release(struct attach_proc *p);

/* Whether the library at @lib (a path as this process sees it, made
 * absolute) can be loaded into @p: an ELF shared object of the process's
 * class and architecture, present at the same path inside the process's
 * root (/proc/PID/root).  0, or -1 with @err filled (source: @lib). */
int attach_lib_check(const struct attach_proc *p, const char *lib, struct leaksnap_error *err);

/* The path of the mapped module of @p whose file name is @name (the last
 * part of its path), or NULL.  Borrowed from @p's maps until they are
 * released; written to @buf. */
const char *attach_find_module(const struct attach_proc *p, const char *name, char *buf,
			       size_t size);

/* The result of a function called in the target. */
struct attach_result {
	int64_t ret;   /* its return value (sign-extended int or pointer) */
	int err_no;    /* the calling thread's errno right after it returned */
};

/* Load @lib into @p with dlopen(@lib, RTLD_NOW | RTLD_LOCAL) and call its
 * leaksnap_start(@opts) (@opts NULL: the defaults).  Returns 0 with *@res
 * the call's result (ret -1 and err_no EALREADY: collection had already
 * started), or -1 with @err filled: the process could not be stopped or
 * exited, dlopen failed (the text is its dlerror()), the library has no
 * leaksnap_start... */
int attach_start(const struct attach_proc *p, const char *lib, const struct leaksnap_options *opts,
		 struct attach_result *res, struct leaksnap_error *err);

/* Call @fn (leaksnap_stop or leaksnap_dump) of the library @lib_name (the
 * file name of a module @p has mapped) in @p, with no argument or the one
 * argument NULL (leaksnap_dump(NULL)).  0 with *@res, or -1 with @err. */
int attach_call_hook(const struct attach_proc *p, const char *lib_name, const char *fn,
		     struct attach_result *res, struct leaksnap_error *err);

/* The leaksnap_options @o as a process with @ptr_size-byte pointers (4 or
 * 8) lays it out, followed by its strings, for the address @base: at most
 * @cap bytes into @buf.  Returns the bytes it takes (more than @cap: only
 * the size was computed), 0 for an unsupported pointer size. */
size_t attach_options_image(const struct leaksnap_options *o, unsigned ptr_size, uint64_t base,
			    uint8_t *buf, size_t cap);

/* Why a process cannot be traced, from the facts a diagnosis uses: the
 * ptrace_scope sysctl (-1 when there is no Yama), whether leaksnap has
 * CAP_SYS_PTRACE, is the process's parent, the real user ids of both, and
 * whether the process is dumpable.  The text is written to @buf. */
struct attach_perm_facts {
	int ptrace_scope;
	bool cap_sys_ptrace;
	bool is_parent;
	unsigned uid;        /* leaksnap's real and effective user id (the effective) */
	unsigned target_uid; /* the process's real user id */
	bool target_setid;   /* its real, effective and saved user ids differ */
	bool dumpable;
};
const char *attach_perm_reason(const struct attach_perm_facts *f, char *buf, size_t size);

#endif
