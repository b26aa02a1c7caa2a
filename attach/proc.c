/* leaksnap attach: what /proc says about a process before it is touched,
 * and why it cannot be traced when it cannot. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <leaksnap/maps.h>

#include "attach_internal.h"
#include "kit.h"

#define MAPS_MAX ((size_t)256 << 20)
#define CAP_SYS_PTRACE_BIT 19

/* Read all of @path into a NUL-terminated heap buffer: 0, or -1 with errno. */
static int read_all(const char *path, size_t max, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (buf == NULL) {
			close(fd);
			errno = ENOMEM;
			return -1;
		}
		if (n + 1 >= cap) {
			if (cap >= max) {
				free(buf);
				close(fd);
				errno = EFBIG;
				return -1;
			}
			char *b = realloc(buf, cap * 2);
			if (b == NULL)
				free(buf);
			buf = b;
			cap *= 2;
			continue;
		}
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			close(fd);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

/* The value of "@key:" in /proc/@pid/status (its first fields), -1 when
 * not there.  @vals gets up to @n numbers. */
static int status_field(int pid, const char *key, long *vals, int n)
{
	char path[64], *text;
	size_t len;
	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	if (read_all(path, 1 << 20, &text, &len) != 0)
		return -1;
	int got = -1;
	size_t klen = strlen(key);
	for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, key, klen) != 0 || line[klen] != ':')
			continue;
		char *p = line + klen + 1;
		got = 0;
		while (got < n) {
			char *end;
			long v = strtol(p, &end, strcmp(key, "CapEff") == 0 ? 16 : 10);
			if (end == p)
				break;
			vals[got++] = v;
			p = end;
		}
		break;
	}
	free(text);
	return got;
}

char attach_thread_state(int pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *paren = strrchr(buf, ')'); /* the name may hold anything */
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

const char *attach_perm_reason(const struct attach_perm_facts *f, char *buf, size_t size)
{
	if (!f->cap_sys_ptrace && f->uid != f->target_uid)
		snprintf(buf, size,
			 "not permitted: the process runs as user %u and leaksnap as user %u; "
			 "tracing another user's process needs CAP_SYS_PTRACE (run leaksnap as "
			 "root or as that user)",
			 f->target_uid, f->uid);
	else if (!f->cap_sys_ptrace && (f->target_setid || !f->dumpable))
		snprintf(buf, size,
			 "not permitted: the process is not dumpable (a set-user-ID program, "
			 "or it called prctl(PR_SET_DUMPABLE, 0)); tracing it needs "
			 "CAP_SYS_PTRACE (run leaksnap as root)");
	else if (f->ptrace_scope >= 3)
		snprintf(buf, size,
			 "not permitted: kernel.yama.ptrace_scope is %d: no process may be "
			 "traced until the next boot",
			 f->ptrace_scope);
	else if (f->ptrace_scope == 2 && !f->cap_sys_ptrace)
		snprintf(buf, size,
			 "not permitted: kernel.yama.ptrace_scope is 2: only a process with "
			 "CAP_SYS_PTRACE may trace (run leaksnap as root, or set the sysctl "
			 "kernel.yama.ptrace_scope=1)");
	else if (f->ptrace_scope == 1 && !f->cap_sys_ptrace && !f->is_parent)
		snprintf(buf, size,
			 "not permitted: kernel.yama.ptrace_scope is 1: a process may only "
			 "trace its own descendants (run leaksnap as root, give it "
			 "CAP_SYS_PTRACE, or set the sysctl kernel.yama.ptrace_scope=0)");
	else
		snprintf(buf, size,
			 "not permitted to trace it (a security module such as SELinux or "
			 "AppArmor may forbid it)");
	return buf;
}

/* Fill @err with why @pid cannot be traced (errno @e was EPERM or EACCES). */
int attach_perm_error(int pid, const char *subject, struct leaksnap_error *err)
{
	struct attach_perm_facts f = {.ptrace_scope = -1, .dumpable = true};
	char *text;
	size_t len;
	if (read_all("/proc/sys/kernel/yama/ptrace_scope", 64, &text, &len) == 0) {
		f.ptrace_scope = atoi(text);
		free(text);
	}
	long cap[1] = {0}, uids[4] = {0}, ppid[1] = {0};
	if (status_field(0, "CapEff", cap, 1) == 1)
		f.cap_sys_ptrace = (cap[0] >> CAP_SYS_PTRACE_BIT) & 1;
	f.uid = (unsigned)geteuid();
	if (status_field(pid, "Uid", uids, 4) >= 3) {
		f.target_uid = (unsigned)uids[0];
		f.target_setid = uids[0] != uids[1] || uids[0] != uids[2];
	}
	if (status_field(pid, "PPid", ppid, 1) == 1)
		f.is_parent = ppid[0] == (long)getpid();
	/* the files of /proc/PID belong to root when the process is not
	 * dumpable (the directory itself may not say so) */
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (stat(path, &st) == 0 && st.st_uid == 0 && f.target_uid != 0)
		f.dumpable = false;
	char buf[LEAKSNAP_ERROR_TEXT_MAX];
	return kit_error(err, LEAKSNAP_ERR_USAGE, subject, "%s",
			 attach_perm_reason(&f, buf, sizeof(buf)));
}

static const char *class_name(unsigned cls)
{
	return cls == ELFCLASS64 ? "64-bit" : cls == ELFCLASS32 ? "32-bit" : "unknown-class";
}

static const char *machine_name(unsigned m, char *buf, size_t size)
{
	switch (m) {
	case EM_X86_64: return "x86-64";
	case EM_386: return "i386";
	case EM_AARCH64: return "arm64";
	case EM_ARM: return "ARM";
	case EM_RISCV: return "RISC-V";
	default: snprintf(buf, size, "ELF machine %u", m); return buf;
	}
}

void attach_proc_release(struct attach_proc *p)
{
	free(p->maps);
	p->maps = NULL;
}

int attach_proc_read(int pid, struct attach_proc *p, struct leaksnap_error *err)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->subject, sizeof(p->subject), "%d", pid);
	long v[4];
	/* a thread's id names its process */
	if (pid <= 0 || status_field(pid, "Tgid", v, 1) != 1)
		return kit_error(err, LEAKSNAP_ERR_USAGE, p->subject, "no such process");
	p->pid = (int)v[0];
	snprintf(p->subject, sizeof(p->subject), "%d", p->pid);
	snprintf(p->root, sizeof(p->root), "/proc/%d/root", p->pid);
	if (p->pid == getpid())
		return kit_error(err, LEAKSNAP_ERR_USAGE, p->subject,
				 "that is leaksnap itself");
	if (status_field(p->pid, "TracerPid", v, 1) == 1 && v[0] != 0)
		return kit_error(err, LEAKSNAP_ERR_USAGE, p->subject,
				 "already traced by process %ld (a debugger?): a process has "
				 "one tracer at a time",
				 v[0]);
	char state = attach_thread_state(p->pid);
	if (state == 0)
		return kit_error(err, LEAKSNAP_ERR_USAGE, p->subject, "no such process");
	if ((state == 'Z' || state == 'X') && status_field(p->pid, "Threads", v, 1) == 1 && v[0] > 1)
		return kit_error(err, LEAKSNAP_ERR_USAGE, p->subject,
				 "its main thread has ended (the process runs on in %ld other "
				 "thread%s): attaching calls in the main thread",
				 v[0] - 1, v[0] == 2 ? "" : "s");
	if (state == 'Z' || state == 'X')
		return kit_error(err, LEAKSNAP_ERR_USAGE, p->subject,
				 "the process has exited (a zombie)");
	if (state == 'T' || state == 't')
		return kit_error(err, LEAKSNAP_ERR_USAGE, p->subject,
				 "the process is stopped (state %c): let it run first (kill -CONT "
				 "%d); attaching would resume it",
				 state, p->pid);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	if (read_all(path, MAPS_MAX, &p->maps, &p->maps_len) != 0) {
		int e = errno;
		if (e == EACCES || e == EPERM)
			return attach_perm_error(p->pid, p->subject, err);
		if (e == ENOENT || e == ESRCH)
			return kit_error(err, LEAKSNAP_ERR_USAGE, p->subject, "no such process");
		return kit_error(err, LEAKSNAP_ERR_IO, p->subject, "%s: %s", path, strerror(e));
	}
	if (p->maps_len == 0)
		return kit_error(err, LEAKSNAP_ERR_USAGE, p->subject,
				 "the process has no memory mappings (a kernel thread, or it is "
				 "exiting)");
	struct attach_elf_facts f;
	snprintf(path, sizeof(path), "/proc/%d/exe", p->pid);
	int r = attach_elf_facts(path, &f);
	if (r < 0 && (errno == EACCES || errno == EPERM))
		return attach_perm_error(p->pid, p->subject, err);
	if (r < 0)
		return kit_error(err, LEAKSNAP_ERR_IO, p->subject, "its executable: %s",
				 strerror(errno));
	if (r > 0)
		return kit_error(err, LEAKSNAP_ERR_FORMAT, p->subject,
				 "its executable is not an ELF file");
	p->elf_class = f.cls;
	p->elf_machine = f.machine;
	char mbuf[32];
	if (f.cls != ARCH_CLASS || f.machine != ARCH_MACHINE)
		return kit_error(err, LEAKSNAP_ERR_USAGE, p->subject,
				 "a %s %s program: this leaksnap attaches to %s programs only",
				 class_name(f.cls), machine_name(f.machine, mbuf, sizeof(mbuf)),
				 ARCH_NAME);
	if (!f.interp)
		return kit_error(err, LEAKSNAP_ERR_USAGE, p->subject,
				 "a statically linked program: it has no dynamic loader to load a "
				 "library with");
	char mod[PATH_MAX];
	const char *hook = attach_find_module(p, LEAKSNAP_HOOK_LIB, mod, sizeof(mod));
	if (hook)
		snprintf(p->preload_hook, sizeof(p->preload_hook), "%s", hook);
	return 0;
}

const char *attach_find_module(const struct attach_proc *p, const char *name, char *buf,
			       size_t size)
{
	size_t nlen = strlen(name);
	for (const char *line = p->maps; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		const char *path = memchr(line, '/', len);
		/* a path is the line's last field: it begins at the first '/' */
		if (path) {
			size_t plen = len - (size_t)(path - line);
			const char *del = " (deleted)";
			if (plen > strlen(del) && memcmp(path + plen - strlen(del), del, strlen(del)) == 0)
				plen -= strlen(del);
			if (plen > nlen && path[plen - nlen - 1] == '/' &&
			    memcmp(path + plen - nlen, name, nlen) == 0 && plen < size) {
				memcpy(buf, path, plen);
				buf[plen] = '\0';
				return buf;
			}
		}
		line = end ? end + 1 : NULL;
	}
	return NULL;
}

int attach_lib_check(const struct attach_proc *p, const char *lib, struct leaksnap_error *err)
{
	struct attach_elf_facts f;
	char mbuf[32], pbuf[32];
	int r = attach_elf_facts(lib, &f);
	if (r < 0)
		return kit_error(err, LEAKSNAP_ERR_IO, lib, "%s", strerror(errno));
	if (r > 0)
		return kit_error(err, LEAKSNAP_ERR_FORMAT, lib, "not an ELF file");
	if (f.type != ET_DYN)
		return kit_error(err, LEAKSNAP_ERR_FORMAT, lib, "not a shared library");
	if (f.cls != p->elf_class || f.machine != p->elf_machine)
		return kit_error(err, LEAKSNAP_ERR_USAGE, lib,
				 "a %s %s library cannot be loaded into process %d, a %s %s "
				 "program",
				 class_name(f.cls), machine_name(f.machine, mbuf, sizeof(mbuf)),
				 p->pid, class_name(p->elf_class),
				 machine_name(p->elf_machine, pbuf, sizeof(pbuf)));
	char there[PATH_MAX + 64];
	snprintf(there, sizeof(there), "%s%s", p->root, lib);
	struct stat st;
	if (stat(there, &st) != 0) {
		int e = errno;
		if (e == EACCES || e == EPERM)
			return attach_perm_error(p->pid, p->subject, err);
		return kit_error(err, LEAKSNAP_ERR_USAGE, lib,
				 "not found inside process %d's root (%s: %s): the process sees "
				 "other files (a container?); put the library at the same path "
				 "there",
				 p->pid, there, strerror(e));
	}
	return 0;
}
