/* leaksnap store: heap snapshots into a store (store/), each run in one
 * write, each new frame symbolized once as 'leaksnap symbolize' would. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kit.h"
#include "store.h"

static const char store_usage[] =
	"Usage: leaksnap store --db DB [--label KEY=VALUE]... DUMP...\n\n"
	"Keep heap snapshots in a store, to compare runs and builds later. DB is a\n"
	"SQLite file, created with the store's schema when it does not exist\n"
	"(docs/store.md), or a ClickHouse server's database:\n"
	"clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE (HTTP, port 8123 by\n"
	"default; the tables are made when the database has none). Snapshots of one process (pid and start) form a run; each\n"
	"run is written at once, or not at all. A dump stored before adds nothing.\n"
	"Stacks are kept once, by a hash of their frames (module build ID or path,\n"
	"offset), and each frame is symbolized once, when it is first stored, as\n"
	"'leaksnap symbolize' does. build_id, exe and cmdline come from the dumps.\n"
	"For each DUMP one line: 'DUMP: stored N records (S stacks, F new frames)'\n"
	"or 'DUMP: already stored'.\n\n"
	"Options:\n"
	"  --db DB              the store: a SQLite file or a clickhouse:// URL\n"
	"  -l, --label KEY=VALUE  say where the run came from: build, commit,\n"
	"                       branch, device, abi, test, or any KEY (letters,\n"
	"                       digits, '_', '-', '.'); repeatable, each KEY once\n"
	"  -s, --symbols DIR    look for symbol files under DIR (repeatable)\n"
	"  --no-adjust          look frames up at the captured address itself\n"
	CLI_DEBUGINFOD_HELP
	"  -h, --help           this help\n\n"
	"Exit status: 0 success, 2 any error (a DUMP that cannot be read, a DB that\n"
	"is not a store, has a newer schema or cannot be written, a server that\n"
	"cannot be reached, a database that does not exist).\n";

#define MAX_LABELS 64
#define MAX_SYMBOL_DIRS 64

struct store_opts {
	const char *db;
	struct leaksnap_store_label labels[MAX_LABELS];
	char *label_text[MAX_LABELS];
	size_t nlabels;
	const char *dirs[MAX_SYMBOL_DIRS];
	size_t ndirs;
	bool no_adjust;
};

static void opts_free(struct store_opts *o)
{
	for (size_t i = 0; i < o->nlabels; i++)
		free(o->label_text[i]);
}

/* --label KEY=VALUE into @o: -1 (said) when it is not one. */
static int add_label(struct store_opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t kl = eq ? (size_t)(eq - arg) : 0;
	if (kl == 0)
		return cli_usage_error("store", "--label needs KEY=VALUE");
	for (size_t i = 0; i < kl; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.",
			    arg[i]) || arg[i] == '\0')
			return cli_usage_error("store", "--label: a KEY is letters, digits, '_', '-' "
					       "and '.'");
	for (size_t i = 0; i < o->nlabels; i++)
		if (strlen(o->labels[i].key) == kl && memcmp(o->labels[i].key, arg, kl) == 0)
			return cli_usage_error("store", "--label %.*s given twice", (int)kl, arg);
	if (o->nlabels == MAX_LABELS)
		return cli_usage_error("store", "more than %d --label options", MAX_LABELS);
	char *key = strdup(arg);
	if (!key)
		return cli_fail(NULL, "out of memory");
	key[kl] = '\0';
	o->label_text[o->nlabels] = key;
	o->labels[o->nlabels++] = (struct leaksnap_store_label){key, key + kl + 1};
	return 0;
}

/* The command line into @o, the first DUMP's index in *@first: 0;
 * CLI_HELP_SHOWN; -1 (said). */
static int parse_args(int argc, char **argv, struct store_opts *o, int *first)
{
	static const struct option longopts[] = {
		{"db", required_argument, NULL, 'D'},
		{"label", required_argument, NULL, 'l'},
		{"symbols", required_argument, NULL, 's'},
		{"no-adjust", no_argument, NULL, 'A'},
		CLI_DEBUGINFOD_LONGOPTS,
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c, r;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hl:s:", longopts, NULL)) != -1) {
		if ((r = cli_debuginfod_option("store", c, optarg)) != 0) {
			if (r != 1)
				return -1;
			continue;
		}
		switch (c) {
		case 'D':
			if (o->db)
				return cli_usage_error("store", "--db given twice");
			o->db = optarg;
			break;
		case 'l':
			if (add_label(o, optarg))
				return -1;
			break;
		case 's':
			if (o->ndirs == MAX_SYMBOL_DIRS)
				return cli_usage_error("store", "more than %d --symbols directories",
						       MAX_SYMBOL_DIRS);
			o->dirs[o->ndirs++] = optarg;
			break;
		case 'A': o->no_adjust = true; break;
		case 'h':
			fputs(store_usage, stdout);
			return cli_finish_stdout(EXIT_OK) == EXIT_OK ? CLI_HELP_SHOWN : -1;
		default:
			return cli_bad_option("store", argv, c == ':' ? ':' : optopt);
		}
	}
	if (!o->db)
		return cli_usage_error("store", "missing --db DB");
	if (optind == argc)
		return cli_usage_error("store", "missing DUMP operand");
	if (!*o->db)
		return cli_fail("", "No such file or directory");
	*first = optind;
	return cli_no_empty_names(argv + optind, argc - optind) ||
	       cli_symbol_dirs_check(o->dirs, o->ndirs);
}

/* The resolver of one snapshot, for the store's callbacks. */
struct sym {
	struct cli_symctx *sc;
	const struct leaksnap_snapshot *snap;
	const struct leaksnap_maps *maps;
};

static int resolve(void *arg, const struct leaksnap_maps_location *loc, struct leaksnap_resolved *out)
{
	struct sym *y = arg;
	return cli_symctx_resolve(y->sc, loc, out);
}

static void prefetch(void *arg, const size_t *records, size_t count)
{
	struct sym *y = arg;
	cli_symctx_prefetch(y->sc, y->maps, y->snap, records, count);
}

struct session {
	const struct store_opts *o;
	struct leaksnap_store *st;
	bool in_run;
	uint64_t run_id;
	int status;
	/* the lines of the run in progress, said once it is committed */
	char *said;
	size_t nsaid, capsaid;
};

/* A line about a DUMP of the run in progress, kept until it is committed:
 * -1 (said) when out of memory. */
static int say(struct session *ss, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(struct session *ss, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || kit_grow((void **)&ss->said, &ss->capsaid, ss->nsaid + (size_t)n + 1, 1))
		return cli_fail(NULL, "out of memory");
	va_start(ap, fmt);
	vsnprintf(ss->said + ss->nsaid, (size_t)n + 1, fmt, ap);
	va_end(ap);
	ss->nsaid += (size_t)n;
	return 0;
}

/* The run in progress, committed, and its lines said: -1 (said) when it
 * could not be. */
static int commit(struct session *ss)
{
	struct leaksnap_error err;
	if (!ss->in_run)
		return 0;
	ss->in_run = false;
	if (leaksnap_store_run_commit(ss->st, &err) != 0)
		return cli_fail_error(&err);
	if (err.code != LEAKSNAP_OK) /* stored; what followed failed */
		cli_warn(err.source, "%s", err.text);
	fwrite(ss->said, 1, ss->nsaid, stdout);
	ss->nsaid = 0;
	return 0;
}

/* DUMP @path into the store: -1 (said) on an error that stops the
 * command. */
static int store_one(struct session *ss, const char *path)
{
	LEAKSNAP_OPTS(leaksnap_snapshot_open_opts, oo);
	struct leaksnap_snapshot *s = cli_open_snapshot(path, &oo, NULL);
	if (!s)
		return -1;
	struct leaksnap_maps *maps = NULL;
	if (cli_snapshot_maps(s, NULL, &maps)) {
		leaksnap_snapshot_close(s);
		return -1;
	}
	cli_print_warnings(s);
	struct leaksnap_error err;
	struct leaksnap_store_run run;
	leaksnap_store_run_of(s, maps, ss->o->labels, ss->o->nlabels, &run);
	int rc = -1;
	struct sym y = {NULL, s, maps};
	if (ss->in_run && ss->run_id != run.id && commit(ss))
		goto out;
	if (!ss->in_run) {
		if (leaksnap_store_run_begin(ss->st, &run, &err) != 0) {
			cli_fail_error(&err);
			goto out;
		}
		ss->in_run = true;
		ss->run_id = run.id;
	}
	y.sc = cli_symctx_new(s, maps, ss->o->dirs, ss->o->ndirs, !ss->o->no_adjust);
	if (!y.sc) {
		cli_fail(path, "out of memory");
		goto out;
	}
	LEAKSNAP_OPTS(leaksnap_store_add_opts, ao, .resolve = resolve, .resolve_arg = &y,
		      .prefetch = prefetch);
	struct leaksnap_store_added added;
	if (leaksnap_store_add_snapshot(ss->st, s, maps, path, &ao, &added, &err) != 0) {
		cli_symctx_progress_end(y.sc);
		cli_fail_error(&err);
		goto out;
	}
	cli_symctx_progress_end(y.sc);
	if (cli_symctx_status(y.sc) != EXIT_OK)
		ss->status = EXIT_ERROR;
	if (added.duplicate)
		rc = say(ss, "%s: already stored\n", path);
	else
		rc = say(ss, "%s: stored %zu record%s (%zu stack%s, %zu new frame%s)\n", path,
			 added.records, added.records == 1 ? "" : "s", added.stacks,
			 added.stacks == 1 ? "" : "s", added.new_frames,
			 added.new_frames == 1 ? "" : "s");
out:
	cli_symctx_free(y.sc);
	leaksnap_maps_free(maps);
	leaksnap_snapshot_close(s);
	return rc;
}

int cmd_store(int argc, char **argv)
{
	struct store_opts o = {0};
	int first = 0, rc = parse_args(argc, argv, &o, &first);
	if (rc) {
		opts_free(&o);
		return rc == CLI_HELP_SHOWN ? EXIT_OK : EXIT_ERROR;
	}
	struct leaksnap_error err;
	struct session ss = {&o, leaksnap_store_open(o.db, NULL, &err), false, 0, EXIT_OK,
			     NULL, 0, 0};
	if (!ss.st) {
		cli_fail_error(&err);
		opts_free(&o);
		return EXIT_ERROR;
	}
	int status = EXIT_OK;
	for (int i = first; i < argc && status == EXIT_OK; i++)
		if (store_one(&ss, argv[i]) != 0)
			status = EXIT_ERROR;
	if (status == EXIT_OK && commit(&ss) != 0)
		status = EXIT_ERROR;
	leaksnap_store_run_abort(ss.st);
	leaksnap_store_close(ss.st);
	free(ss.said);
	opts_free(&o);
	if (status == EXIT_OK)
		status = ss.status;
	return cli_finish_stdout(status);
}
