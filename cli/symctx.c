/* leaksnap CLI: symbolizing the frames of a snapshot through a resolver
 * (resolve/), saying its problems as they are met and showing progress on
 * a terminal. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
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
		      .warn_arg = c);
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
