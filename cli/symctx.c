/* leaksnap CLI: symbolizing the frames of a snapshot through a resolver
 * (resolve/), saying its problems as they are met and showing progress on
 * a terminal. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

struct cli_symctx {
	struct leaksnap_resolver *r;
	const struct leaksnap_snapshot *snap;       /* its metadata has the build IDs */
	const struct leaksnap_maps *maps;           /* its maps (a debug-only file's layout) */
	int status;                        /* EXIT_ERROR once a problem was said */
	bool tty;                          /* stderr is a terminal: progress */
	bool progress_shown;
	double started, last_progress;
};

unsigned cli_sym_jobs(void)
{
	const char *env = getenv("LEAKSNAP_JOBS");
	uint64_t v;
	if (env && *env && cli_parse_uint(env, 0, 64, &v))
		return (unsigned)v;
	long n = 0;
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n <= 1 ? 1 : n >= 4 ? 4 : (unsigned)n;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The debuginfod options ---------------------------------------------------- */

static struct {
	const char *off;    /* "--no-debuginfod" or "--offline", or NULL */
	bool urls_given;    /* --debuginfod */
	char urls[4096];    /* their URLs, space separated */
} dbgd;

/* Whether @u (@n bytes) is a URL libdebuginfod can use: http://HOST[:PORT]
 * [/PATH], https://..., or file:///DIR (file://localhost/DIR): the schemes
 * it lets libcurl follow.  Printable ASCII without the characters a URL
 * never holds. */
static bool url_ok(const char *u, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)u[i] <= 0x20 || (unsigned char)u[i] >= 0x7f ||
		    strchr("\"<>\\^`{|}", u[i]))
			return false;
	static const char *const schemes[] = {"http://", "https://", "file://"};
	size_t k = 0, sl = 0;
	for (; k < 3; k++) {
		sl = strlen(schemes[k]);
		if (n >= sl && strncasecmp(u, schemes[k], sl) == 0)
			break;
	}
	if (k == 3)
		return false;
	const char *auth = u + sl, *end = u + n;
	size_t al = strcspn(auth, "/?#");
	if (auth + al > end)
		al = (size_t)(end - auth);
	if (k == 2) /* file: no host but this one, then a path */
		return (al == 0 || (al == 9 && strncasecmp(auth, "localhost", 9) == 0)) &&
		       auth + al < end && auth[al] == '/';
	const char *at = memrchr(auth, '@', al), *host = at ? at + 1 : auth;
	size_t hl = al - (size_t)(host - auth);
	if (hl && host[0] == '[') { /* [IPv6] */
		const char *close = memchr(host, ']', hl);
		if (!close || close == host + 1)
			return false;
		hl -= (size_t)(close + 1 - host);
		host = close + 1;
		if (hl && host[0] != ':')
			return false;
	} else {
		const char *colon = memchr(host, ':', hl);
		if (colon == host || hl == 0)
			return false;
		if (colon) {
			hl -= (size_t)(colon - host);
			host = colon;
		} else {
			hl = 0;
		}
	}
	if (hl <= 1) /* no port, or ':' alone (the default one) */
		return true;
	/* :PORT, 1 to 65535 */
	unsigned long port = 0;
	if (hl > 6)
		return false;
	for (size_t i = 1; i < hl; i++) {
		if (host[i] < '0' || host[i] > '9')
			return false;
		port = port * 10 + (unsigned long)(host[i] - '0');
	}
	return port >= 1 && port <= 65535;
}

/* @arg's first word (space separated) that is not a URL url_ok() takes,
 * copied escaped to @bad; or false when there is none and at least one URL. */
static bool urls_bad(const char *arg, char *bad, size_t size)
{
	const char *p = arg + strspn(arg, " ");
	const char *word = p;
	size_t wl = strlen(p);
	bool any = false;
	for (; *p; p += strspn(p, " ")) {
		size_t n = strcspn(p, " ");
		if (!url_ok(p, n)) {
			word = p;
			wl = n;
			any = false;
			break;
		}
		any = true;
		p += n;
	}
	if (any)
		return false;
	/* the word, its bytes that are not printable as \xNN, cut short */
	size_t o = 0;
	for (size_t i = 0; i < wl; i++) {
		unsigned char ch = (unsigned char)word[i];
		if (o + 8 >= size || o >= 100) {
			o += (size_t)snprintf(bad + o, size - o, "...");
			break;
		}
		if (ch < 0x20 || ch >= 0x7f || ch == '\\' || ch == '\'')
			o += (size_t)snprintf(bad + o, size - o, "\\x%02x", ch);
		else
			bad[o++] = (char)ch;
	}
	bad[o] = '\0';
	return true;
}

int cli_debuginfod_option(const char *cmd, int c, const char *arg)
{
	switch (c) {
	case CLI_OPT_DEBUGINFOD: {
		if (dbgd.off)
			return cli_usage_error(cmd, "--debuginfod and %s exclude each other",
					       dbgd.off);
		char bad[128];
		if (urls_bad(arg, bad, sizeof(bad)))
			return cli_usage_error(cmd, "--debuginfod needs URLs such as http://HOST:PORT, "
					       "https://HOST or file:///DIR, got '%s'", bad);
		size_t have = strlen(dbgd.urls), n = strlen(arg);
		if (have + 1 + n >= sizeof(dbgd.urls))
			return cli_usage_error(cmd, "--debuginfod: more than %zu bytes of URLs",
					       sizeof(dbgd.urls) - 1);
		if (have)
			dbgd.urls[have++] = ' ';
		memcpy(dbgd.urls + have, arg, n + 1);
		dbgd.urls_given = true;
		/* libdebuginfod reads the servers from the environment only:
		 * set here, while the command is still one thread */
		if (setenv("DEBUGINFOD_URLS", dbgd.urls, 1) != 0)
			return cli_fail(cmd, "cannot set DEBUGINFOD_URLS: %s", strerror(errno));
		return 1;
	}
	case CLI_OPT_NO_DEBUGINFOD:
	case CLI_OPT_OFFLINE: {
		const char *name = c == CLI_OPT_OFFLINE ? "--offline" : "--no-debuginfod";
		if (dbgd.urls_given)
			return cli_usage_error(cmd, "--debuginfod and %s exclude each other", name);
		dbgd.off = name;
		return 1;
	}
	default:
		return 0;
	}
}

bool cli_debuginfod(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	return !dbgd.off && urls && urls[strspn(urls, " \t\n")];
}

void cli_say_no_symbols(void *arg, const struct leaksnap_sym_module *m)
{
	(void)arg;
	char why[160] = "", file[64 + LEAKSNAP_ERROR_SOURCE_MAX] = "";
	if (m->debuginfod_error)
		snprintf(why, sizeof(why), " (debuginfod: %s)", m->debuginfod_error);
	else if (dbgd.off)
		snprintf(why, sizeof(why), " (debuginfod: off, %s, and not in its cache)",
			 dbgd.off);
	if (m->file_path && strcmp(m->file_path, m->path) != 0)
		snprintf(file, sizeof(file), " (file used: %s)", m->file_path);
	cli_warn(m->path,
		 "stripped%s, and no debug file found%s: its frames are mostly ?\?; for "
		 "symbols install its debug package (-dbgsym or -dbg), or give --symbols "
		 "/usr/lib/debug, or a debuginfod server (DEBUGINFOD_URLS or --debuginfod URL)",
		 file, why);
}

const char *cli_debug_note(const struct leaksnap_sym_module *m)
{
	static char buf[4200];
	if (!m->file)
		return "";
	if (m->no_symbols)
		return ", stripped";
	const char *debug = leaksnap_sym_file_debug_path(m->file);
	if (!m->from_debuginfod)
		return "";
	if (!debug || strcmp(debug, m->file_path) == 0)
		return ", from debuginfod";
	snprintf(buf, sizeof(buf), ", debug file from debuginfod: %s", debug);
	return buf;
}

/* Symbolizing ------------------------------------------------------------------ */

static void say_no_symbols(void *arg, const struct leaksnap_sym_module *m)
{
	cli_symctx_progress_end(arg);
	cli_say_no_symbols(NULL, m);
}

/* A problem with a symbol file, said as it is met. */
static void say_problem(void *arg, const struct leaksnap_error *e)
{
	struct cli_symctx *c = arg;
	cli_symctx_progress_end(c);
	cli_fail_error(e);
	char buf[LEAKSNAP_ERROR_SOURCE_MAX + LEAKSNAP_ERROR_TEXT_MAX + 64];
	cli_warnings_note(NULL, leaksnap_error_format(e, buf, sizeof(buf)));
	c->status = EXIT_ERROR;
}

struct cli_symctx *cli_symctx_new(const struct leaksnap_snapshot *s,
				  const struct leaksnap_maps *maps, const char *const *dirs,
				  size_t ndirs, bool adjust)
{
	struct cli_symctx *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->tty = isatty(2) == 1;
	c->started = now_s();
	c->snap = s;
	c->maps = maps;
	LEAKSNAP_OPTS(leaksnap_resolver_opts, o, .symbol_dirs = dirs, .symbol_dir_count = ndirs,
		      .return_addresses = adjust, .jobs = cli_sym_jobs(),
		      .pointer_size = leaksnap_snapshot_pointer_size_known(s), .warn = say_problem,
		      .warn_arg = c, .debuginfod = cli_debuginfod(), .no_symbols = say_no_symbols,
		      .no_symbols_arg = c);
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	c->r = leaksnap_resolver_new(&o, &err);
	if (!c->r) {
		free(c);
		return NULL;
	}
	return c;
}

/* Progress on a terminal, once symbolizing has taken more than a second:
 * one line, rewritten in place, erased at the end. */
void cli_symctx_progress(struct cli_symctx *c, size_t done, size_t total)
{
	if (!c->tty)
		return;
	double t = now_s();
	if (t - c->started < 1.0 || t - c->last_progress < 0.25)
		return;
	c->last_progress = t;
	c->progress_shown = true;
	fprintf(stderr, "\rleaksnap: symbolizing: %zu of %zu records, %zu modules, %zu addresses",
		done, total, leaksnap_resolver_module_count(c->r),
		leaksnap_resolver_address_count(c->r));
	fflush(stderr);
}

void cli_symctx_progress_end(struct cli_symctx *c)
{
	if (c && c->progress_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		c->progress_shown = false;
	}
}

void cli_symctx_free(struct cli_symctx *c)
{
	if (!c)
		return;
	leaksnap_resolver_free(c->r);
	free(c);
}

int cli_symctx_status(const struct cli_symctx *c)
{
	return c->status;
}

size_t cli_symctx_module_count(const struct cli_symctx *c)
{
	return leaksnap_resolver_module_count(c->r);
}

const struct leaksnap_sym_module *cli_symctx_module(const struct cli_symctx *c, size_t i)
{
	return leaksnap_resolver_module(c->r, i);
}

void cli_symctx_prefetch(struct cli_symctx *c, const struct leaksnap_maps *maps,
			 const struct leaksnap_snapshot *s, const size_t *records, size_t count)
{
	leaksnap_resolve_prefetch(c->r, s, maps, records, count);
}

int cli_symctx_resolve(struct cli_symctx *c, const struct leaksnap_maps_location *loc,
		       struct leaksnap_resolved *out)
{
	struct leaksnap_error err;
	if (leaksnap_resolve_pc(c->r, c->snap, c->maps, loc, out, &err) != 0) {
		say_problem(c, &err);
		return -1;
	}
	return 0;
}
