/* leaksnap record: run a program with the malloc hook preloaded, pass its
 * exit status through, and list the dumps it (and its children) wrote.
 *
 * Everything that can be checked is checked before the program starts (option
 * values, the dump directory, the command, the hook library), so that a
 * mistake costs one line and exit status 2, not a run without dumps.  While
 * the program runs, record waits, passes signals on and lists the dumps as
 * they appear (record_run.c, record_procs.c, record_dumps.c); stdout is the
 * program's, record's own messages go to stderr. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <leaksnap/leakhook.h>

#include "cli.h"
#include "record.h"

/* leakhook.h's name for it once the hook has its socket (control.h's is
 * the same variable) */
#ifndef LEAKSNAP_HOOK_ENV_CONTROL
#define LEAKSNAP_HOOK_ENV_CONTROL CONTROL_ENV
#endif

#ifdef __BIONIC__
#define DEFAULT_PREFIX LEAKSNAP_HOOK_ANDROID_DEFAULT_OUT /* the hook's default there */
#else
#define DEFAULT_PREFIX LEAKSNAP_HOOK_DEFAULT_OUT
#endif
/* The range the hook accepts for LEAKSNAP_INTERVAL (it ignores others). */
#define INTERVAL_MIN_SEC 0.001
#define INTERVAL_MAX_SEC 1000000.0

static const char record_usage[] =
	"Usage: leaksnap record [OPTIONS] [--] CMD [ARGS...]\n\n"
	"Run CMD with the leaksnap malloc hook (libleakhook.so) preloaded, wait for it,\n"
	"and list on standard error every dump that CMD and its children write under\n"
	"PREFIX, with its record, byte and allocation counts: each as soon as record\n"
	"sees it (from the run's first second on), the rest when CMD ends (a child\n"
	"still running then, a daemon, is not waited for; leaksnap_dump(path) may write\n"
	"elsewhere: those are not listed).  Standard input, standard output and the\n"
	"exit status are the program's; record's own messages go to standard error.\n"
	"Options end at '--' or at the first argument that is not an option.\n\n"
	"Options:\n"
	"  --out PREFIX         name the dumps PREFIX.PID.NNNN.dump (default: an inherited\n"
	"                       $LEAKSNAP_OUT, else " DEFAULT_PREFIX "); the directory\n"
	"                       of PREFIX is made if it does not exist (its parent\n"
	"                       must): 0700, or as root 0711 with a drop box in it\n"
	"                       where processes that gave up root write their dumps\n"
	"                       (record moves them beside the others); a process\n"
	"                       that could not write a dump is named, with why\n"
	"  --frames N           frames captured per allocation: 1..256 (default 16)\n"
	"  --unwind MODE        auto (the default), fp (frame pointers: exact only if\n"
	"                       every function on the path keeps them, libraries too;\n"
	"                       one that does not hides its caller), dwarf\n"
	"                       (.eh_frame call-frame information) or instrument\n"
	"                       (the calls of code built with -finstrument-functions:\n"
	"                       no frame pointers or unwind tables needed)\n"
	"  --sample BYTES       sampled collection: record a block when a sample point\n"
	"                       (one every BYTES bytes allocated on average, 1 to\n"
	"                       1073741824) falls in it, and every block of BYTES or\n"
	"                       more; readers show estimates (docs/hook.md); not\n"
	"                       with --reachability\n"
	"  --interval SEC       also dump every SEC seconds: a decimal number from\n"
	"                       0.001 to 1000000, fractions allowed (0.5)\n"
	"  --no-exit-dump       do not dump when a process exits\n"
	"  --reachability       classify every live block as reachable or not at each\n"
	"                       dump (threads pause briefly, and a sleep they were in\n"
	"                       returns early; docs/reachability.md)\n"
	"  --only GLOB          record only the processes whose executable's file name\n"
	"                       matches GLOB (a shell pattern; the name /proc/PID/exe\n"
	"                       links to: python3.11 for a script run by python3);\n"
	"                       the others run with the hook inert and pass it on to\n"
	"                       their children; repeat it to record several programs\n"
	"  --libs REGEX         record only what the libraries whose path matches REGEX\n"
	"                       (a POSIX extended regular expression, searched for in\n"
	"                       the path /proc/PID/maps shows; '' = every library but\n"
	"                       the C library and the loader; the executable counts as\n"
	"                       one) allocate: the in-app hook (libleakhook-inapp.so,\n"
	"                       docs/inapp.md) is preloaded instead, started at once;\n"
	"                       allocations a library's constructors made before it was\n"
	"                       patched (when it is loaded later by dlopen) are not seen\n"
	"  --control            open the hook's control socket in each process\n"
	"                       (leaksnap.PID, for 'leaksnap ctl' and 'leaksnap watch')\n"
	"  --watch SEC          --control, and take a snapshot of CMD over it every SEC\n"
	"                       seconds (0 to 86400, fractions allowed) as 'leaksnap\n"
	"                       watch' does, into the directory of PREFIX as\n"
	"                       watch.PID.NNNN.dump; the live lines and the leakdiff\n"
	"                       command go to standard error\n"
	"  -h, --help           this help\n\n"
	"Files (PID is the process that dumped: children of CMD dump too):\n"
	"  PREFIX.PID.NNNN.dump   the N-th dump of PID, LEAKSNAP v1 (0001, 0002 ...,\n"
	"                         wider past 9999; older hooks wrote 1, 2 ...)\n"
	"  PREFIX.PID.crash.dump  the dump written when PID dies of a fatal signal\n"
	"  PREFIX.PID.exit.dump   the dump written when PID exits\n"
	"  PREFIX.PID.*.maps      the process's /proc/PID/maps, beside each dump\n"
	"Dumps that already existed before the run are not listed.\n\n"
	"Signals: record ignores SIGINT and SIGQUIT (the terminal delivers them to\n"
	"the program; record stays to list the dumps) and forwards SIGTERM, SIGHUP,\n"
	"SIGUSR1 and SIGUSR2 to CMD (one that record inherited ignored, as under nohup,\n"
	"stays ignored).  The hook's two signals sent to record's pid reach every\n"
	"recorded process of the run, CMD's children and theirs too (those that carry\n"
	"LEAKSNAP_RUN and have the hook's handler):\n"
	"  SIGRTMAX-%-11d dump now                (here: kill -%d PID)\n"
	"  SIGRTMAX-%-11d toggle capture off/on   (here: kill -%d PID)\n"
	"(Shells name them by their number, RTMIN+N or RTMAX-N: see 'kill -l %d'.)\n\n"
	"Environment set for CMD and its children (read by the hook; a variable whose\n"
	"option is not given keeps its inherited value):\n"
	"  LD_PRELOAD           the hook's absolute path, before any inherited entries\n"
	"  LEAKSNAP_LIBS        REGEX with --libs\n"
	"  LEAKSNAP_OUT         PREFIX, made absolute\n"
	"  LEAKSNAP_DROP        the drop box, when record made the directory as root\n"
	"  LEAKSNAP_FRAMES      --frames N\n"
	"  LEAKSNAP_UNWIND      --unwind MODE\n"
	"  LEAKSNAP_INTERVAL    --interval SEC\n"
	"  LEAKSNAP_SAMPLE      --sample BYTES\n"
	"  LEAKSNAP_DUMP_ON_EXIT  0 with --no-exit-dump; the hook's default, 1, writes\n"
	"                       no exit dump of a forked child that did not exec (set\n"
	"                       it to all yourself for those too)\n"
	"  LEAKSNAP_REACHABILITY  1 with --reachability\n"
	"  LEAKSNAP_ONLY        GLOB[:GLOB...] with --only (':' separates the globs)\n"
	"  LEAKSNAP_CONTROL     1 with --control or --watch\n"
	"  LEAKSNAP_RUN         this run's id (after any inherited ones), by which\n"
	"                       record finds the run's processes\n"
	"  LEAKSNAP_START_DISABLED  1 (set it yourself) starts with capture off\n"
	"  LEAKSNAP_KEEP_UNLOADED   0 (set it yourself) forgets unloaded libraries\n"
	"  LEAKSNAP_DUMP_ON_CRASH   0 (set it yourself) writes no PREFIX.PID.crash.dump\n"
	"Read by record: LEAKSNAP_HOOK=PATH uses PATH as the hook library instead of\n"
	"../lib/libleakhook.so next to the leaksnap program; with --libs,\n"
	"LEAKSNAP_HOOK_INAPP=PATH instead of ../lib/libleakhook-inapp.so.\n\n"
	"Exit status: the program's; 128+N when it was killed by signal N;\n"
	"             126 CMD found but not executable; 127 CMD not found;\n"
	"             2 any error of record itself (usage, dump directory, hook library).\n";

struct record_opts {
	const char *out;      /* --out PREFIX, or NULL */
	unsigned frames;      /* --frames N, 0 = not given */
	const char *unwind;   /* --unwind MODE, or NULL */
	const char *interval; /* --interval SEC (validated, normalised), or NULL */
	uint64_t sample;      /* --sample BYTES, 0 = not given */
	bool no_exit_dump;    /* --no-exit-dump */
	bool reachability;    /* --reachability */
	char *only;           /* --only GLOBs joined by ':' (owned), or NULL */
	const char *libs;     /* --libs REGEX (checked), or NULL: the preload hook */
	bool control;         /* --control (or --watch) */
	double watch;         /* --watch SEC, when @watching */
	bool watching;
	char interval_buf[48]; /* storage for @interval */
};

/* ------------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------------ */

/* "leaksnap: <message>" on stderr, not an error: cli_fail() prints exactly
 * that line (with control bytes escaped); its status is not ours. */
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	char msg[PATH_MAX + 256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cli_fail(NULL, "%s", msg);
}

/* cli_fail, then -1: the helpers below return -1 after printing. */
static int fail(const char *subject, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const char *subject, const char *fmt, ...)
{
	char msg[2 * PATH_MAX + 256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cli_fail(subject, "%s", msg);
	return -1;
}

static const char *signal_name(int sig, char *buf, size_t size)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {
		{SIGHUP, "SIGHUP"},     {SIGINT, "SIGINT"},       {SIGQUIT, "SIGQUIT"},
		{SIGILL, "SIGILL"},     {SIGTRAP, "SIGTRAP"},     {SIGABRT, "SIGABRT"},
		{SIGBUS, "SIGBUS"},     {SIGFPE, "SIGFPE"},       {SIGKILL, "SIGKILL"},
		{SIGUSR1, "SIGUSR1"},   {SIGSEGV, "SIGSEGV"},     {SIGUSR2, "SIGUSR2"},
		{SIGPIPE, "SIGPIPE"},   {SIGALRM, "SIGALRM"},     {SIGTERM, "SIGTERM"},
		{SIGCHLD, "SIGCHLD"},   {SIGCONT, "SIGCONT"},     {SIGSTOP, "SIGSTOP"},
		{SIGTSTP, "SIGTSTP"},   {SIGTTIN, "SIGTTIN"},     {SIGTTOU, "SIGTTOU"},
		{SIGURG, "SIGURG"},     {SIGXCPU, "SIGXCPU"},     {SIGXFSZ, "SIGXFSZ"},
		{SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"},   {SIGWINCH, "SIGWINCH"},
		{SIGIO, "SIGIO"},       {SIGSYS, "SIGSYS"},
#ifdef SIGSTKFLT
		{SIGSTKFLT, "SIGSTKFLT"},
#endif
#ifdef SIGPWR
		{SIGPWR, "SIGPWR"},
#endif
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].sig == sig)
			return names[i].name;
	/* the hook's two signals as its docs name them */
	if (sig == LEAKSNAP_HOOK_SIG_DUMP || sig == LEAKSNAP_HOOK_SIG_TOGGLE) {
		snprintf(buf, size, "SIGRTMAX-%d", SIGRTMAX - sig);
	} else if (sig >= SIGRTMIN && sig <= SIGRTMAX) {
		/* Name real-time signals the way kill -l does: from the nearer end. */
		if (SIGRTMAX - sig < sig - SIGRTMIN)
			snprintf(buf, size, "SIGRTMAX-%d", SIGRTMAX - sig);
		else
			snprintf(buf, size, "SIGRTMIN+%d", sig - SIGRTMIN);
	} else {
		snprintf(buf, size, "signal %d", sig);
	}
	return buf;
}

/* ------------------------------------------------------------------------
 * Validation
 * ------------------------------------------------------------------------ */

/* A positive decimal number of seconds: DIGITS[.DIGITS] or .DIGITS, nothing
 * else (no sign, exponent, hex, inf, spaces), in the hook's range. */
static bool interval_ok(const char *s)
{
	double v;
	return cli_parse_seconds(s, INTERVAL_MIN_SEC, INTERVAL_MAX_SEC, &v);
}

/* Split the prefix into directory and base, check the directory is one we
 * can write in, and make the prefix absolute.  Returns 0, or -1 after
 * printing why not. */
static int prefix_check(struct record_prefix *p)
{
	const char *slash = strrchr(p->shown, '/');
	size_t dlen = slash ? (size_t)(slash - p->shown) + 1 : 0;
	char label[PATH_MAX + 32], dir[PATH_MAX];
	snprintf(label, sizeof(label), "%s%s", p->origin, p->shown);
	p->base = p->shown + dlen;
	if (*p->base == '\0' || strcmp(p->base, ".") == 0 || strcmp(p->base, "..") == 0)
		return fail(label, "must end in a file name prefix, e.g. DIR/app "
				   "(dumps are named PREFIX.PID.N.dump)");
	if (dlen >= sizeof(dir))
		return fail(label, "%s", strerror(ENAMETOOLONG));
	if ((p->dir = strndup(p->shown, dlen)) == NULL)
		return fail(label, "out of memory");
	/* The directory as messages show it: "out", "/", ".". */
	snprintf(dir, sizeof(dir), "%.*s", (int)(dlen > 1 ? dlen - 1 : dlen), p->shown);
	if (dlen == 0)
		strcpy(dir, ".");
	struct stat st;
	bool made = false;
	if (stat(dir, &st) != 0 && errno == ENOENT) {
		/* Made here, where the processes of the run can write: 0700,
		 * or as root 0711 with a drop box for processes that give up
		 * root (record_drop.c). */
		if (mkdir(dir, geteuid() == 0 ? 0711 : 0700) != 0)
			return fail(label, "cannot make directory '%s': %s", dir, strerror(errno));
		made = true;
	}
	if (stat(dir, &st) != 0)
		return fail(label, "directory '%s': %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail(label, "'%s' is not a directory", dir);
	if (access(dir, W_OK | X_OK) != 0)
		return fail(label, "directory '%s' is not writable: %s", dir, strerror(errno));
	/* access() says yes to root for a directory no file can be made in
	 * (/proc, a read-only mount): make one */
	char probe[PATH_MAX];
	if (snprintf(probe, sizeof(probe), "%s/.leaksnap-record.XXXXXX", dir) >= (int)sizeof(probe))
		return fail(label, "%s", strerror(ENAMETOOLONG));
	int pfd = mkostemp(probe, O_CLOEXEC);
	if (pfd < 0)
		return fail(label, "cannot create a file in directory '%s': %s", dir,
			    strerror(errno));
	close(pfd);
	unlink(probe);
	char *real = realpath(dir, NULL);
	if (real == NULL)
		return fail(label, "directory '%s': %s", dir, strerror(errno));
	size_t rlen = strlen(real);
	p->abs = malloc(rlen + 1 + strlen(p->base) + 1);
	if (p->abs == NULL) {
		free(real);
		return fail(label, "out of memory");
	}
	/* realpath("/") is "/": no second slash. */
	sprintf(p->abs, "%s%s%s", real, real[rlen - 1] == '/' ? "" : "/", p->base);
	int de = made && geteuid() == 0 ? record_drop_make(p, real) : 0;
	free(real);
	if (de != 0)
		return fail(label, "cannot make a drop box in directory '%s': %s", dir, strerror(de));
	if (strlen(p->abs) > LEAKSNAP_HOOK_OUT_MAX)
		return fail("record", "%sPREFIX is too long: %zu bytes once absolute, the hook "
				      "takes at most %d",
			    p->origin, strlen(p->abs), LEAKSNAP_HOOK_OUT_MAX);
	/* "--out build" next to a directory "build" is almost certainly meant as
	 * "build/NAME": say where the files will really go. */
	if (stat(p->shown, &st) == 0 && S_ISDIR(st.st_mode))
		cli_warn(label, "'%s' is a directory: dumps go beside it as %s.PID.N.dump; use "
				"%s/NAME to write inside it",
			 p->shown, p->shown, p->shown);
	return 0;
}

/* Find @name as execvp() does: the name itself when it contains a '/', else
 * the first executable regular file in $PATH (default /bin:/usr/bin; an
 * empty entry is the working directory).  Returns 0 and a new string in
 * *found, or an errno value: ENOENT (nowhere), EACCES (only files we may not
 * execute) or another error that ends the search, as in execvp(). */
static int lookup_command(const char *name, char **found)
{
	*found = NULL;
	if (*name == '\0')
		return ENOENT;
	struct stat st;
	if (strchr(name, '/')) {
		if (stat(name, &st) != 0)
			return errno;
		if (!S_ISREG(st.st_mode) || access(name, X_OK) != 0)
			return EACCES;
		*found = strdup(name);
		return *found ? 0 : ENOMEM;
	}
	const char *path = getenv("PATH");
	if (path == NULL)
		path = "/bin:/usr/bin";
	int err = ENOENT;
	size_t nlen = strlen(name);
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t dlen = (size_t)(end - p);
		char *cand = malloc(dlen + 1 + nlen + 1);
		if (cand == NULL)
			return ENOMEM;
		if (dlen == 0)
			memcpy(cand, name, nlen + 1);
		else
			sprintf(cand, "%.*s/%s", (int)dlen, p, name);
		if (stat(cand, &st) == 0) {
			if (S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
				*found = cand;
				return 0;
			}
			err = EACCES;
		} else if (errno == EACCES) {
			err = EACCES;
		} else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE &&
			   errno != ENODEV && errno != ETIMEDOUT) {
			int e = errno;
			free(cand);
			return e;
		}
		free(cand);
		if (*end == '\0')
			return err;
		p = end;
	}
}

/* The hook library: $LEAKSNAP_HOOK, else ../lib/libleakhook.so from the
 * directory of this program (/proc/self/exe is already free of symlinks,
 * so "bin/.." is simply the parent directory).  Returns the absolute path
 * (owned) or NULL after printing the error. */
static char *find_hook(bool inapp)
{
	const char *env = getenv(inapp ? "LEAKSNAP_HOOK_INAPP" : "LEAKSNAP_HOOK");
	const char *env_name = inapp ? "LEAKSNAP_HOOK_INAPP" : "LEAKSNAP_HOOK";
	char exe[PATH_MAX + 32];
	const char *path, *hint;
	if (env && *env) {
		path = env;
		hint = inapp ? "from LEAKSNAP_HOOK_INAPP" : "from LEAKSNAP_HOOK";
	} else {
		ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX);
		if (n <= 0) {
			cli_fail("/proc/self/exe", "%s (set %s=PATH to name the hook library)",
				 n < 0 ? strerror(errno) : "empty link", env_name);
			return NULL;
		}
		exe[n] = '\0';
		for (int up = 0; up < 2; up++) { /* strip "/leaksnap", then "/bin" */
			char *slash = strrchr(exe, '/');
			if (slash == NULL)
				break;
			*slash = '\0';
		}
		strcat(exe, inapp ? "/lib/" LEAKSNAP_HOOK_INAPP_LIB : "/lib/" LEAKSNAP_HOOK_LIB);
		path = exe;
		hint = inapp ? "looked for next to leaksnap; set LEAKSNAP_HOOK_INAPP=PATH to use another"
			     : "looked for next to leaksnap; set LEAKSNAP_HOOK=PATH to use another";
	}
	struct stat st;
	if (stat(path, &st) != 0) {
		cli_fail(path, "hook library not found: %s (%s)", strerror(errno), hint);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		cli_fail(path, "hook library is not a regular file (%s)", hint);
		return NULL;
	}
	if (access(path, R_OK) != 0) {
		cli_fail(path, "cannot read the hook library: %s (%s)", strerror(errno), hint);
		return NULL;
	}
	char *abs = realpath(path, NULL);
	if (abs == NULL) {
		cli_fail(path, "%s", strerror(errno));
		return NULL;
	}
	/* ld.so splits LD_PRELOAD at spaces and colons, with no way to quote. */
	if (strpbrk(abs, " :\t\n")) {
		cli_fail(abs, "the hook library's path contains a space or ':', which LD_PRELOAD "
			      "cannot carry; copy it elsewhere and set %s", env_name);
		free(abs);
		return NULL;
	}
	return abs;
}

/* ------------------------------------------------------------------------
 * Why no dump was written: facts about the program's executable
 * ------------------------------------------------------------------------ */

struct elf_facts {
	bool is_elf;     /* an ELF file in our byte order */
	bool has_interp; /* PT_INTERP: dynamically linked */
	unsigned cls;    /* ELFCLASS32 / ELFCLASS64 */
	unsigned machine;
	char shebang[PATH_MAX]; /* "#!" interpreter, or "" */
};

static bool elf_facts_read(const char *path, struct elf_facts *f)
{
	memset(f, 0, sizeof(*f));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	union {
		unsigned char b[4096];
		Elf32_Ehdr e32;
		Elf64_Ehdr e64;
	} h;
	ssize_t n = pread(fd, h.b, sizeof(h.b), 0);
	bool ok = false;
	if (n >= 2 && h.b[0] == '#' && h.b[1] == '!') {
		size_t i = 2, j = 0;
		while (i < (size_t)n && (h.b[i] == ' ' || h.b[i] == '\t'))
			i++;
		while (i < (size_t)n && j + 1 < sizeof(f->shebang) && h.b[i] != ' ' &&
		       h.b[i] != '\t' && h.b[i] != '\n' && h.b[i] != '\r')
			f->shebang[j++] = (char)h.b[i++];
		ok = j > 0;
	} else if (n >= (ssize_t)sizeof(Elf32_Ehdr) && memcmp(h.b, ELFMAG, SELFMAG) == 0) {
		static const uint16_t one = 1;
		unsigned char host = *(const unsigned char *)&one ? ELFDATA2LSB : ELFDATA2MSB;
		f->cls = h.b[EI_CLASS];
		if (h.b[EI_DATA] == host && (f->cls == ELFCLASS32 || f->cls == ELFCLASS64) &&
		    (f->cls == ELFCLASS32 || n >= (ssize_t)sizeof(Elf64_Ehdr))) {
			bool is64 = f->cls == ELFCLASS64;
			uint64_t phoff = is64 ? h.e64.e_phoff : h.e32.e_phoff;
			unsigned phnum = is64 ? h.e64.e_phnum : h.e32.e_phnum;
			unsigned phent = is64 ? h.e64.e_phentsize : h.e32.e_phentsize;
			f->machine = is64 ? h.e64.e_machine : h.e32.e_machine;
			f->is_elf = ok = true;
			for (unsigned i = 0; i < phnum && phent >= sizeof(Elf32_Phdr); i++) {
				Elf64_Phdr p64;
				Elf32_Phdr p32;
				uint32_t type;
				off_t at = (off_t)(phoff + (uint64_t)i * phent);
				if (is64 ? pread(fd, &p64, sizeof(p64), at) != (ssize_t)sizeof(p64)
					 : pread(fd, &p32, sizeof(p32), at) != (ssize_t)sizeof(p32))
					break;
				type = is64 ? p64.p_type : p32.p_type;
				if (type == PT_INTERP) {
					f->has_interp = true;
					break;
				}
			}
		}
	}
	close(fd);
	return ok;
}

/* A reason why LD_PRELOAD cannot have loaded @hook into the program at
 * @exe (CMD resolved through $PATH), written to @buf; NULL when none is
 * known.  A script is judged by its interpreter (one level). */
static const char *preload_blocker(const char *cmd, const char *exe, const char *hook, char *buf,
				   size_t size)
{
	struct stat st;
	struct elf_facts f, hf;
	char what[PATH_MAX + 64], interp[PATH_MAX];
	snprintf(what, sizeof(what), "%s", cmd);
	for (int depth = 0; depth < 2 && exe; depth++) {
		if (stat(exe, &st) == 0 &&
		    (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
		     ((st.st_mode & S_ISGID) && st.st_gid != getegid()))) {
			snprintf(buf, size,
				 "%s is set%cid: the dynamic loader ignores LD_PRELOAD for it",
				 what, (st.st_mode & S_ISUID) ? 'u' : 'g');
			return buf;
		}
		if (!elf_facts_read(exe, &f))
			return NULL;
		if (f.shebang[0]) {
			snprintf(interp, sizeof(interp), "%s", f.shebang);
			snprintf(what, sizeof(what), "%s's interpreter %s", cmd, interp);
			exe = interp;
			continue;
		}
		if (!f.has_interp) {
			snprintf(buf, size,
				 "%s is statically linked: LD_PRELOAD cannot load the hook "
				 "into it",
				 what);
			return buf;
		}
		if (elf_facts_read(hook, &hf) && hf.is_elf &&
		    (hf.cls != f.cls || hf.machine != f.machine)) {
			snprintf(buf, size, "%s is a %d-bit program for ELF machine %u, the hook a "
					    "%d-bit library for machine %u",
				 what, f.cls == ELFCLASS64 ? 64 : 32, f.machine,
				 hf.cls == ELFCLASS64 ? 64 : 32, hf.machine);
			return buf;
		}
		return NULL;
	}
	return NULL;
}

/* ------------------------------------------------------------------------
 * The command
 * ------------------------------------------------------------------------ */

/* Add a --only GLOB to the list the hook gets.  0, or -1 after printing
 * why not. */
static int only_add(struct record_opts *o, const char *glob)
{
	if (*glob == '\0' || strchr(glob, ':') || strchr(glob, '/')) {
		cli_usage_error("record", "--only takes a pattern for an executable's file name, "
					  "without '/' or ':' (a '?' matches either), e.g. 'python3*'");
		return -1;
	}
	size_t old = o->only ? strlen(o->only) : 0;
	char *v = realloc(o->only, old + 1 + strlen(glob) + 1);
	if (v == NULL)
		return fail("record", "out of memory");
	sprintf(v + old, "%s%s", old ? ":" : "", glob);
	o->only = v;
	return 0;
}

/* The options: 0 to go on, 1 when the help was printed, -1 after printing
 * an error. */
static int parse_options(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{"out", required_argument, NULL, 'o'},
		{"frames", required_argument, NULL, 'F'},
		{"unwind", required_argument, NULL, 'U'},
		{"interval", required_argument, NULL, 'I'},
		{"sample", required_argument, NULL, 'S'},
		{"no-exit-dump", no_argument, NULL, 'N'},
		{"reachability", no_argument, NULL, 'R'},
		{"only", required_argument, NULL, 'O'},
		{"libs", required_argument, NULL, 'L'},
		{"control", no_argument, NULL, 'C'},
		{"watch", required_argument, NULL, 'W'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	uint64_t v;
	optind = 0;
	opterr = 0;
	/* '+': stop at the first non-option, which is CMD; its options are its own. */
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->out = optarg; break;
		case 'F':
			if (!cli_parse_uint(optarg, 1, 256, &v)) {
				cli_usage_error("record",
						"--frames must be a number from 1 to 256");
				return -1;
			}
			o->frames = (unsigned)v;
			break;
		case 'U':
			if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "fp") != 0 &&
			    strcmp(optarg, "dwarf") != 0 && strcmp(optarg, "instrument") != 0) {
				cli_usage_error("record",
						"--unwind must be auto, fp, dwarf or instrument");
				return -1;
			}
			o->unwind = optarg;
			break;
		case 'I':
			if (!interval_ok(optarg) || strlen(optarg) + 2 > sizeof(o->interval_buf)) {
				cli_usage_error("record", "--interval must be a number of seconds "
							  "from 0.001 to 1000000, e.g. 0.5");
				return -1;
			}
			/* Hand the hook plain DIGITS[.DIGITS]: ".5" -> "0.5", "2." -> "2". */
			snprintf(o->interval_buf, sizeof(o->interval_buf), "%s%s",
				 *optarg == '.' ? "0" : "", optarg);
			if (o->interval_buf[strlen(o->interval_buf) - 1] == '.')
				o->interval_buf[strlen(o->interval_buf) - 1] = '\0';
			o->interval = o->interval_buf;
			break;
		case 'S':
			if (!cli_parse_uint(optarg, 1, LEAKSNAP_HOOK_SAMPLE_MAX, &o->sample)) {
				cli_usage_error("record", "--sample must be a number of bytes from 1 "
							  "to %llu",
						(unsigned long long)LEAKSNAP_HOOK_SAMPLE_MAX);
				return -1;
			}
			break;
		case 'N': o->no_exit_dump = true; break;
		case 'C': o->control = true; break;
		case 'W':
			if (!cli_parse_seconds(optarg, 0, 86400, &o->watch)) {
				cli_usage_error("record", "--watch must be seconds from 0 to 86400, "
							  "e.g. 0.5");
				return -1;
			}
			o->watching = o->control = true;
			break;
		case 'R': o->reachability = true; break;
		case 'O':
			if (only_add(o, optarg) != 0)
				return -1;
			break;
		case 'L': {
			regex_t re;
			int rc = *optarg ? regcomp(&re, optarg, REG_EXTENDED | REG_NOSUB) : 0;
			if (rc != 0) {
				char why[128];
				regerror(rc, &re, why, sizeof(why));
				cli_usage_error("record", "--libs %s: not a valid extended regular "
							  "expression: %s", optarg, why);
				return -1;
			}
			if (*optarg)
				regfree(&re);
			o->libs = optarg;
			break;
		}
		case 'h':
			/* The signal numbers depend on the C library: print them. */
			printf(record_usage, LEAKSNAP_HOOK_SIG_DUMP_OFFSET, LEAKSNAP_HOOK_SIG_DUMP,
			       LEAKSNAP_HOOK_SIG_TOGGLE_OFFSET, LEAKSNAP_HOOK_SIG_TOGGLE,
			       LEAKSNAP_HOOK_SIG_DUMP);
			return cli_finish_stdout(EXIT_OK) == EXIT_OK ? CLI_HELP_SHOWN : -1;
		default:
			cli_bad_option("record", argv, c == ':' ? ':' : optopt);
			return -1;
		}
	}
	if (o->sample && o->reachability) {
		/* (a sampled block held only through unsampled ones would be
		 * counted unreachable: docs/reachability.md) */
		cli_usage_error("record", "--sample and --reachability do not go together: a "
					  "sample cannot tell which blocks are unreachable");
		return -1;
	}
	if (optind >= argc) {
		cli_usage_error("record", "missing CMD to run");
		return -1;
	}
	return 0;
}

/* Set the hook's environment for the child (and, harmlessly, for record,
 * which execs nothing else).  Returns 0, or -1 after printing why not. */
static int set_hook_env(const struct record_opts *o, const struct record_prefix *p, const char *hook,
			const char *run_id)
{
	char num[16];
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(hook) + (old ? strlen(old) : 0) + 2;
	char *preload = malloc(len);
	if (preload == NULL)
		return fail("record", "out of memory");
	snprintf(preload, len, "%s%s%s", hook, old && *old ? ":" : "", old ? old : "");
	int rc = setenv("LD_PRELOAD", preload, 1);
	free(preload);
	rc |= setenv(LEAKSNAP_HOOK_ENV_OUT, p->abs, 1);
	if (p->drop)
		rc |= setenv(LEAKSNAP_HOOK_ENV_DROP, p->drop, 1);
	if (o->frames) {
		snprintf(num, sizeof(num), "%u", o->frames);
		rc |= setenv(LEAKSNAP_HOOK_ENV_FRAMES, num, 1);
	}
	if (o->unwind)
		rc |= setenv(LEAKSNAP_HOOK_ENV_UNWIND, o->unwind, 1);
	if (o->interval)
		rc |= setenv(LEAKSNAP_HOOK_ENV_INTERVAL, o->interval, 1);
	if (o->sample) {
		char bytes[24];
		snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)o->sample);
		rc |= setenv(LEAKSNAP_HOOK_ENV_SAMPLE, bytes, 1);
	}
	if (o->no_exit_dump)
		rc |= setenv(LEAKSNAP_HOOK_ENV_DUMP_ON_EXIT, "0", 1);
	if (o->reachability)
		rc |= setenv(LEAKSNAP_HOOK_ENV_REACHABILITY, "1", 1);
	if (o->only)
		rc |= setenv(LEAKSNAP_HOOK_ENV_ONLY, o->only, 1);
	if (o->libs)
		rc |= setenv(LEAKSNAP_HOOK_ENV_LIBS, o->libs, 1);
	if (o->control)
		rc |= setenv(LEAKSNAP_HOOK_ENV_CONTROL, "1", 1);
	/* This run's id after those of any record this one runs under, so
	 * that theirs still reach the processes of this run. */
	const char *runs = getenv(RECORD_RUN_ENV);
	len = (runs ? strlen(runs) : 0) + strlen(run_id) + 2;
	char *v = malloc(len);
	if (v == NULL)
		return fail("record", "out of memory");
	snprintf(v, len, "%s%s%s", runs && *runs ? runs : "", runs && *runs ? ":" : "", run_id);
	rc |= setenv(RECORD_RUN_ENV, v, 1);
	free(v);
	return rc ? fail("record", "cannot set the environment: %s", strerror(errno)) : 0;
}

/* Report that @cmd could not be executed (errno @e); returns the exit
 * status record ends with, the one env(1) and the shells use: 127 not
 * found, 126 anything else. */
static int exec_failure(const char *cmd, int e)
{
	if (*cmd == '\0')
		cli_fail(NULL, "'': command not found");
	else if (e == ENOENT && !strchr(cmd, '/'))
		cli_fail(cmd, "command not found");
	else
		cli_fail(cmd, "%s", strerror(e));
	return e == ENOENT ? 127 : 126;
}

/* The program exited, the exit dump was wanted, and its name was taken by
 * a file from before the run (a pid used again): the hook never replaces
 * a file, and its own message may be lost (a program that closes standard
 * error at exit, as coreutils do).  Says so, after the dumps that were
 * written; true if it did. */
static bool exit_name_taken(const struct record_opts *o, const struct record_prefix *p,
			    const struct record_dump_list *before, const struct run_result *res)
{
	const char *exit_env = getenv(LEAKSNAP_HOOK_ENV_DUMP_ON_EXIT);
	if (o->no_exit_dump || (exit_env && strcmp(exit_env, "0") == 0) ||
	    !WIFEXITED(res->wait_status) || res->pid <= 0)
		return false;
	struct record_dump d = {NULL, (unsigned long)res->pid, RECORD_DUMP_EXIT};
	char name[64 + NAME_MAX];
	snprintf(name, sizeof(name), LEAKSNAP_HOOK_EXIT_DUMP_NAME, p->base, (int)res->pid);
	d.name = name;
	if (!record_dump_list_has(before, &d))
		return false;
	cli_warn(p->shown, "%s%s was there before this run: the hook never replaces a file, so "
		 "process %lu's exit dump was not written", p->dir, name, (unsigned long)res->pid);
	return true;
}

/* When LEAKSNAP_ONLY (--only, or inherited) leaves the program at @exe out
 * of the recording: why, in @buf; else NULL.  The name is the one the hook
 * matches, the last part of the executable's real path (a script's: its
 * interpreter's). */
static const char *only_mismatch(const char *exe, char *buf, size_t size)
{
	const char *only = getenv(LEAKSNAP_HOOK_ENV_ONLY);
	struct elf_facts f;
	if (only == NULL || *only == '\0' || exe == NULL)
		return NULL;
	if (elf_facts_read(exe, &f) && f.shebang[0])
		exe = f.shebang;
	char *real = realpath(exe, NULL);
	if (real == NULL)
		return NULL;
	const char *name = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	char glob[PATH_MAX];
	bool match = false;
	for (const char *g = only; *g && !match;) {
		size_t n = strcspn(g, ":");
		if (n > 0 && n < sizeof(glob)) {
			memcpy(glob, g, n);
			glob[n] = '\0';
			match = fnmatch(glob, name, 0) == 0;
		}
		g += n + (g[n] == ':');
	}
	if (!match)
		snprintf(buf, size, "the file name of CMD's executable, '%s', matches no --only "
				    "pattern ('%s'); the processes it starts are recorded when theirs "
				    "match", name, only);
	free(real);
	return match ? NULL : buf;
}

/* The hint of "no dumps written (HINT)". */
static void no_dumps(const struct record_opts *o, const struct record_prefix *p, const char *cmd,
		     const char *exe, const char *hook, int wait_status)
{
	char buf[2 * PATH_MAX + 128];
	const char *exit_env = getenv(LEAKSNAP_HOOK_ENV_DUMP_ON_EXIT);
	bool exit_off = o->no_exit_dump || (exit_env && strcmp(exit_env, "0") == 0);
	const char *why = preload_blocker(cmd, exe, hook, buf, sizeof(buf));
	if (why == NULL)
		why = only_mismatch(exe, buf, sizeof(buf));
	if (why) {
		note("no dumps written (%s)", why);
	} else if (exit_off) {
		note("no dumps written (%s: request dumps with --interval SEC or "
		     "kill -%d <record's pid>)",
		     o->no_exit_dump ? "--no-exit-dump was given"
				     : LEAKSNAP_HOOK_ENV_DUMP_ON_EXIT "=0",
		     LEAKSNAP_HOOK_SIG_DUMP);
	} else if (WIFSIGNALED(wait_status) &&
		   (WTERMSIG(wait_status) == LEAKSNAP_HOOK_SIG_DUMP ||
		    WTERMSIG(wait_status) == LEAKSNAP_HOOK_SIG_TOGGLE)) {
		note("no dumps written (the hook's signal killed the program: the hook was not "
		     "loaded; see any loader message above)");
	} else if (WIFSIGNALED(wait_status)) {
		note("no dumps written (the program was killed by a signal, so it did not reach "
		     "its "
		     "exit dump)");
	} else {
		note("no dumps written as %s.PID.*.dump (a message of the hook above, if any, says "
		     "why; else did the hook load? see any loader message above; a process that "
		     "ends in _exit() or exec() writes no exit dump, nor does a forked child "
		     "unless " LEAKSNAP_HOOK_ENV_DUMP_ON_EXIT "=all)",
		     p->shown);
	}
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = {NULL, 0, NULL, NULL, 0, false, false, NULL, NULL, false, 0, false, ""};
	struct record_prefix p = {NULL, NULL, NULL, NULL, NULL, NULL};
	struct record_dump_list before = RECORD_DUMP_LIST_INIT, rest = RECORD_DUMP_LIST_INIT;
	struct record_watch watch = {NULL, NULL, RECORD_DUMP_LIST_INIT, -1, false, false, 0};
	char *hook = NULL, *exe = NULL;
	int notes = -1;
	int ret = parse_options(argc, argv, &o);
	if (ret != 0) {
		free(o.only);
		return ret == CLI_HELP_SHOWN ? EXIT_OK : EXIT_ERROR;
	}
	char **cmd = argv + optind;

	const char *env_out = getenv(LEAKSNAP_HOOK_ENV_OUT);
	if (o.out) {
		p.shown = o.out;
		p.origin = "--out ";
	} else if (env_out && *env_out) {
		p.shown = env_out;
		p.origin = LEAKSNAP_HOOK_ENV_OUT "=";
	} else {
		p.shown = DEFAULT_PREFIX;
		p.origin = "default prefix ";
	}
	if (prefix_check(&p) != 0) {
		ret = EXIT_ERROR;
		goto cleanup;
	}

	/* Looked up here too (execvp() decides), so that a typo fails before
	 * anything else is needed, and for the hints about static programs. */
	int e = lookup_command(cmd[0], &exe);
	if (e != 0) {
		ret = exec_failure(cmd[0], e);
		goto cleanup;
	}
	if ((hook = find_hook(o.libs != NULL)) == NULL) {
		ret = EXIT_ERROR;
		goto cleanup;
	}
	if ((e = record_dump_scan(&p, NULL, NULL, &before)) != 0) {
		cli_fail(p.shown, "cannot list directory '%s': %s", *p.dir ? p.dir : ".",
			 strerror(e));
		ret = EXIT_ERROR;
		goto cleanup;
	}
	struct run_result res;
	/* Unique among the runs of this machine: pid and the time. */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	char run_id[64];
	snprintf(run_id, sizeof(run_id), "%ld.%lld.%ld", (long)getpid(), (long long)ts.tv_sec,
		 (long)ts.tv_nsec);
	record_watch_start(&watch, &p, &before);
	/* --watch: its snapshots go where the dumps go */
	char ctl_dir[PATH_MAX];
	snprintf(ctl_dir, sizeof(ctl_dir), "%s", *p.dir ? p.dir : ".");
	if (strlen(ctl_dir) > 1 && ctl_dir[strlen(ctl_dir) - 1] == '/')
		ctl_dir[strlen(ctl_dir) - 1] = '\0';
	struct record_ctl ctl = {.dir = ctl_dir, .every = o.watch};
	notes = record_notes_open(run_id);
	if (set_hook_env(&o, &p, hook, run_id) != 0 ||
	    record_run(cmd, run_id, &watch, o.watching ? &ctl : NULL, &res) != 0) {
		ret = EXIT_ERROR;
		goto cleanup;
	}
	if (res.exec_errno) {
		ret = exec_failure(cmd[0], res.exec_errno);
		goto cleanup;
	}
	if (WIFSIGNALED(res.wait_status)) {
		char nb[32];
		int sig = WTERMSIG(res.wait_status);
		cli_fail(cmd[0], "killed by signal %d (%s)", sig, signal_name(sig, nb, sizeof(nb)));
		ret = 128 + sig;
	} else {
		ret = WEXITSTATUS(res.wait_status);
	}
	/* The dumps not listed while the program ran, then what is to say
	 * about them all. */
	record_drop_finish(&p);
	size_t refused = 0;
	if ((e = record_dump_scan(&p, &before, &watch.listed, &rest)) != 0) {
		cli_warn(p.shown, "cannot list directory '%s': %s", *p.dir ? p.dir : ".",
			 strerror(e));
	} else {
		record_dump_list_print(&p, &rest);
		/* then the processes that could not write theirs */
		refused = record_notes_report(notes, &p);
		notes = -1;
		size_t total = rest.n + watch.listed.n;
		if (exit_name_taken(&o, &p, &before, &res))
			; /* said */
		else if (total == 0 && !refused)
			no_dumps(&o, &p, cmd[0], exe, hook, res.wait_status);
		else if (watch.listed.n > 0)
			note("%zu dump%s written (%zu listed while the program ran)", total,
			     total == 1 ? "" : "s", watch.listed.n);
	}

cleanup:
	if (notes >= 0)
		close(notes);
	if (p.drop)
		rmdir(p.drop);
	free(p.drop);
	record_watch_release(&watch);
	record_dump_list_release(&before);
	record_dump_list_release(&rest);
	free(o.only);
	free(hook);
	free(exe);
	free(p.dir);
	free(p.abs);
	return ret;
}
