/* leaksnap CLI: messages, option helpers, snapshot loading. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "kit_utf8.h"

/* Messages quote bytes from untrusted inputs: control characters and
 * bytes outside UTF-8 are shown as \xNN so that a message always stays one
 * line on the terminal. */
static void put_escaped(const char *s)
{
	cli_put_escaped(stderr, s, false);
}

const char *cli_program_name = "leaksnap";
/* The warnings said so far, for the documents that carry them (--json and
 * the page: cli_warnings_json).  At most CLI_WARNINGS_MAX are kept; the
 * others are counted.  They live until the process ends. */
struct warning {
	char *subject; /* NULL: none */
	char *text;
};
static struct {
	struct warning v[CLI_WARNINGS_MAX];
	size_t n, more;
} warnings;

void cli_warnings_note(const char *subject, const char *text)
{
	if (warnings.n == CLI_WARNINGS_MAX) {
		warnings.more++;
		return;
	}
	struct warning w = {subject ? strdup(*subject ? subject : "''") : NULL, strdup(text)};
	if (!w.text || (subject && !w.subject)) {
		free(w.subject);
		free(w.text);
		warnings.more++; /* out of memory: counted, not lost */
		return;
	}
	warnings.v[warnings.n++] = w;
}

json_t *cli_warnings_json(const char *doc_file, const char *const *extra, size_t nextra)
{
	json_t *a = json_array();
	size_t more = warnings.more;
	for (size_t i = 0; a && i < warnings.n; i++) {
		const struct warning *w = &warnings.v[i];
		char *t = NULL;
		if (w->subject && !(doc_file && strcmp(doc_file, w->subject) == 0) &&
		    asprintf(&t, "%s: %s", w->subject, w->text) < 0)
			t = NULL;
		json_array_append_new(a, kit_json_text(t ? t : w->text));
		free(t);
	}
	for (size_t i = 0; a && i < nextra; i++) {
		if (json_array_size(a) < CLI_WARNINGS_MAX)
			json_array_append_new(a, kit_json_text(extra[i]));
		else
			more++;
	}
	if (a && more) {
		char t[80];
		snprintf(t, sizeof(t), "%zu more warning%s not listed here", more,
			 more == 1 ? "" : "s");
		json_array_append_new(a, json_string(t));
	}
	return a;
}

static void vmsg(const char *subject, const char *kind, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static void vmsg(const char *subject, const char *kind, const char *fmt, va_list ap)
{
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (kind)
		cli_warnings_note(subject, msg);
	fflush(stdout);
	fprintf(stderr, "%s: ", cli_program_name);
	if (subject) {
		/* an empty file name given as an argument is shown as '' */
		put_escaped(*subject ? subject : "''");
		fputs(": ", stderr);
	}
	if (kind)
		fputs(kind, stderr);
	put_escaped(msg);
	fputc('\n', stderr);
}

int cli_fail(const char *subject, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(subject, NULL, fmt, ap);
	va_end(ap);
	return -1;
}

void cli_warn(const char *subject, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(subject, "warning: ", fmt, ap);
	va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* (run as leakdiff, the command is the program: no "diff: ") */
	if (strcmp(cli_program_name, "leaksnap") != 0)
		cli_fail(NULL, "%s (see '%s --help')", msg, cli_program_name);
	else
		cli_fail(cmd, "%s (see 'leaksnap %s --help')", msg, cmd);
	return -1;
}

int cli_fail_error(const struct leaksnap_error *err)
{
	char buf[LEAKSNAP_ERROR_SOURCE_MAX + LEAKSNAP_ERROR_TEXT_MAX + 64];
	cli_fail(NULL, "%s", leaksnap_error_format(err, buf, sizeof(buf)));
	return -1;
}

bool cli_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (s == NULL || *s < '0' || *s > '9')
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool cli_parse_bytes(const char *s, uint64_t *out)
{
	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return false;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (shift && *end == 'i')
		end++;
	if (*end == 'B' || (*end == 'b' && shift))
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

bool cli_parse_seconds(const char *s, double min, double max, double *out)
{
	if (s == NULL)
		return false;
	size_t digits = strspn(s, "0123456789");
	const char *p = s + digits;
	if (*p == '.') {
		size_t more = strspn(p + 1, "0123456789");
		digits += more;
		p += 1 + more;
	}
	if (digits == 0 || *p != '\0')
		return false;
	double v = strtod(s, NULL);
	if (!(v >= min && v <= max))
		return false;
	*out = v;
	return true;
}

int cli_input_option(const char *cmd, int c, const char *arg, struct cli_input *in)
{
	uint64_t v;
	switch (c) {
	case 'm':
		in->maps_path = arg;
		return 1;
	case 'P':
		if (!cli_parse_uint(arg, 4, 8, &v) || (v != 4 && v != 8))
			return cli_usage_error(cmd, "--pointer-size must be 4 or 8");
		in->open.pointer_size = (unsigned)v;
		return 1;
	case 'F':
		if (!cli_parse_uint(arg, 1, 256, &v))
			return cli_usage_error(cmd, "--frames must be a number from 1 to 256");
		in->open.frames = (unsigned)v;
		return 1;
	case 'C':
		in->open.count_is_frames = true;
		return 1;
	}
	return 0;
}

int cli_input_check(const char *cmd, const struct cli_input *in)
{
	if ((in->open.pointer_size != 0) != (in->open.frames != 0))
		return cli_usage_error(cmd, "--pointer-size and --frames go together");
	return 0;
}

/* The library names a leaksnap_snapshot_open_opts field in its texts as "opts.FIELD";
 * the user sets it with this option. */
static const struct {
	const char *api, *option;
} input_names[] = {
	{"opts.pointer_size", "--pointer-size"},
	{"opts.frames", "--frames"},
	{"opts.count_is_frames", "--count-is-frames"},
};

const char *cli_input_text(const char *text, char *buf, size_t size)
{
	if (size == 0 || strstr(text, "opts.") == NULL)
		return text;
	size_t n = 0;
	while (*text && n + 1 < size) {
		size_t k = 0;
		while (k < sizeof(input_names) / sizeof(input_names[0]) &&
		       strncmp(text, input_names[k].api, strlen(input_names[k].api)) != 0)
			k++;
		if (k == sizeof(input_names) / sizeof(input_names[0])) {
			buf[n++] = *text++;
			continue;
		}
		n += (size_t)snprintf(buf + n, size - n, "%s", input_names[k].option);
		if (n >= size)
			n = size - 1;
		text += strlen(input_names[k].api);
	}
	buf[n] = '\0';
	return buf;
}

/* @s as a shell word into @out (of @size): as it is when it needs no
 * quoting, else in single quotes ('\'' for a quote).  false: it does not
 * fit. */
static bool shell_word(const char *s, char *out, size_t size)
{
	bool plain = *s != '\0';
	for (const char *p = s; *p && plain; p++)
		plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			       "._/+-,:@%=", *p) != NULL;
	size_t n = 0;
	if (!plain && n + 1 < size)
		out[n++] = '\'';
	for (const char *p = s; *p && n + 5 < size; p++) {
		if (*p == '\'' && !plain) {
			memcpy(out + n, "'\\''", 4);
			n += 4;
		} else {
			out[n++] = *p;
		}
	}
	if (!plain && n + 1 < size)
		out[n++] = '\'';
	if (n >= size)
		return false;
	out[n] = '\0';
	/* (all of @s, and its closing quote) */
	size_t want = strlen(s) + (plain ? 0 : 2);
	for (const char *p = s; *p && !plain; p++)
		want += *p == '\'' ? 3 : 0;
	return n == want;
}

void cli_input_error(struct leaksnap_error *err)
{
	if (err->code == LEAKSNAP_ERR_MAPS_FILE) {
		/* (the file is readable: its offset says nothing) */
		bool is_stdin = strcmp(err->source, "<stdin>") == 0;
		err->has_offset = false;
		/* the command to run, the path quoted for the shell (one too long
		 * for the text is FILE: it is said before) */
		char word[160];
		if (!shell_word(is_stdin ? "-" : err->source, word, sizeof(word)))
			snprintf(word, sizeof(word), "FILE");
		snprintf(err->text, sizeof(err->text),
			 "a /proc/PID/maps file, not a heap snapshot (read it with: leaksnap maps %s)",
			 word);
		return;
	}
	char buf[sizeof(err->text)];
	const char *text = cli_input_text(err->text, buf, sizeof(buf));
	if (text == buf)
		memcpy(err->text, buf, sizeof(buf));
}

int cli_symbol_dirs_check(const char *const *dirs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(dirs[i], &st) != 0)
			return cli_fail(dirs[i], "%s", strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return cli_fail(dirs[i], "not a directory");
	}
	return 0;
}

int cli_no_empty_names(char **names, int n)
{
	for (int i = 0; i < n; i++) {
		if (names[i] && !names[i][0]) {
			cli_fail("", "%s", strerror(ENOENT)); /* shown as '' */
			return -1;
		}
	}
	return 0;
}

int cli_stdin_once(const char *a, const char *b)
{
	if (a && b && strcmp(a, "-") == 0 && strcmp(b, "-") == 0) {
		cli_fail("-", "given more than once: standard input can be read only once");
		return -1;
	}
	return 0;
}

int cli_bad_option(const char *cmd, char **argv, int opt)
{
	extern int optind;
	const char *arg = argv[optind - 1];
	if (opt == ':')
		cli_usage_error(cmd, "option '%s' needs a value", arg);
	else
		cli_usage_error(cmd, "unknown option '%s'", arg);
	return -1;
}

int cli_read_file(const char *path, size_t max, const char *what, char **text, size_t *len)
{
	const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
	*text = NULL;
	*len = 0;
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (f == NULL) {
		cli_fail(name, "%s", strerror(errno));
		return -1;
	}
	FILE *mem = open_memstream(text, len);
	char buf[65536];
	size_t n;
	size_t total = 0;
	bool too_big = false;
	while (mem && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (n > max - total) {
			too_big = true;
			break;
		}
		total += n;
		fwrite(buf, 1, n, mem);
	}
	int e = ferror(f) ? (errno ? errno : EIO) : 0;
	if (f != stdin)
		fclose(f);
	if (mem == NULL || fclose(mem) != 0 || e || too_big) {
		free(*text);
		*text = NULL;
		if (too_big)
			cli_fail(name, "more than %zu MiB: too large for %s", max >> 20, what);
		else
			cli_fail(name, "%s", strerror(e ? e : ENOMEM));
		return -1;
	}
	return 0;
}

struct leaksnap_snapshot *cli_open_snapshot(const char *path,
					    const struct leaksnap_snapshot_open_opts *opts,
					    const char *maps_path)
{
	struct leaksnap_error err;
	struct leaksnap_snapshot *s = leaksnap_snapshot_open(path, opts, &err);
	if (s == NULL) {
		cli_input_error(&err);
		cli_fail_error(&err);
		return NULL;
	}
	if (maps_path) {
		char *text;
		size_t len;
		if (cli_read_file(maps_path, CLI_MAPS_MAX, "a maps file", &text, &len)) {
			leaksnap_snapshot_close(s);
			return NULL;
		}
		const char *not_maps = NULL;
		size_t lead = 0;
		while (lead < len &&
		       (text[lead] == ' ' || text[lead] == '\t' || text[lead] == '\n'))
			lead++;
		if (lead == len)
			not_maps = "empty: no mappings (a maps file is a copy of /proc/PID/maps)";
		else if (len >= 8 && memcmp(text, "LEAKSNAP", 8) == 0)
			not_maps = "a LEAKSNAP dump, not a maps file (a dump's own maps are read "
				   "without --maps)";
		else if (len - lead >= 26 &&
			 memcmp(text + lead, "Android Native Heap Dump v", 26) == 0)
			not_maps =
				"an Android text heap dump, not a maps file (its own maps follow "
				"its records: leave --maps out)";
		if (not_maps) {
			free(text);
			leaksnap_snapshot_close(s);
			cli_fail(maps_path, "%s", not_maps);
			return NULL;
		}
		if (leaksnap_snapshot_set_maps(s, text, len, &err)) {
			free(text);
			cli_fail_error(&err);
			leaksnap_snapshot_close(s);
			return NULL;
		}
		free(text);
	}
	return s;
}

void cli_print_warnings(const struct leaksnap_snapshot *s)
{
	char buf[1024];
	for (size_t i = 0; i < leaksnap_snapshot_warning_count(s); i++)
		cli_warn(leaksnap_snapshot_source(s), "%s",
			 cli_input_text(leaksnap_snapshot_warning(s, i), buf, sizeof(buf)));
}

/* A --maps file in which no frame of the snapshot lies was most likely
 * taken from another process (or another run): say so once. */
static void warn_foreign_maps(const struct leaksnap_snapshot *s, const struct leaksnap_maps *m,
			      const char *maps_path)
{
	size_t frames = 0;
	for (size_t i = 0; i < leaksnap_snapshot_record_count(s); i++) {
		const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(s, i);
		for (uint32_t f = 0; f < r->frame_count; f++) {
			if (leaksnap_maps_lookup(m, r->frames[f]))
				return;
			frames++;
		}
	}
	if (frames)
		cli_warn(maps_path, "none of the snapshot's %zu frames lies in these mappings: "
			 "the maps of another process?", frames);
}

/* The hook's "unloaded=" lines, the mappings of libraries dlclose()d before
 * the dump, join its maps where nothing else is mapped now: the frames of
 * blocks those libraries allocated still name them.  A malformed line is
 * a warning, and none of them is used.  0, or -1 (printed): out of memory. */
static int add_unloaded(const struct leaksnap_snapshot *s, struct leaksnap_maps *m)
{
	struct leaksnap_error err;
	size_t shadowed = 0;
	long added = leaksnap_maps_add_snapshot_unloaded(m, s, &shadowed, &err);
	if (added >= 0) {
		if (shadowed)
			cli_warn(
				leaksnap_snapshot_source(s),
				"the code of %zu mapping%s of libraries unloaded "
				"before the dump lies under code another file loaded since: frames "
				"there are said to be in that file, whichever ran them",
				shadowed, shadowed == 1 ? "" : "s");
		return 0;
	}
	if (err.code == LEAKSNAP_ERR_NOMEM) {
		cli_fail_error(&err);
		return -1;
	}
	cli_warn(leaksnap_snapshot_source(s),
		 "unloaded= line %lu of the metadata is not a maps line "
		 "(%s): the mappings of unloaded libraries are not used",
		 err.line, err.text);
	return 0;
}

int cli_snapshot_maps(const struct leaksnap_snapshot *s, const char *maps_path,
		      struct leaksnap_maps **out)
{
	size_t len;
	unsigned long line;
	uint64_t off;
	const char *text = leaksnap_snapshot_maps(s, &len, &line, &off);
	*out = NULL;
	if (text == NULL)
		return 0;
	/* Errors name the file the maps came from: the --maps file, or the dump
	 * (line numbers for text dumps, byte offsets for binary ones). */
	const char *src = maps_path ? maps_path : leaksnap_snapshot_source(s);
	struct leaksnap_error err;
	struct leaksnap_maps *m = leaksnap_maps_parse(
		text, len, src, maps_path ? 1 : (line ? line : 1), maps_path ? 0 : off, &err);
	if (m != NULL) {
		if (maps_path) {
			warn_foreign_maps(s, m, maps_path);
		} else if (add_unloaded(s, m)) {
			leaksnap_maps_free(m);
			return -1;
		}
		*out = m;
		return 0;
	}
	if (maps_path || line) {
		cli_fail_error(&err);
		return -1;
	}
	/* Binary container: point at the byte offset of the bad maps line. */
	uint64_t at = off;
	unsigned long l = 1;
	for (size_t i = 0; i < len && l < err.line; i++)
		if (text[i] == '\n') {
			l++;
			at = off + i + 1;
		}
	cli_fail(err.source, "byte offset %llu: maps line %lu: %s", (unsigned long long)at,
		 err.line, err.text);
	return -1;
}

int cli_finish_stdout(int status)
{
	/* a command that failed has said why, once (a write error on
	 * standard output may be that reason: said by who wrote it) */
	if (status == EXIT_ERROR || status < 0) {
		fflush(stdout);
		return EXIT_ERROR;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		int e = errno;
		fprintf(stderr, "%s: <stdout>: write error: %s\n", cli_program_name,
			strerror(e ? e : EIO));
		return EXIT_ERROR;
	}
	return status;
}

void cli_format_time(uint64_t ns, char *buf, size_t size)
{
	time_t sec = (time_t)(ns / 1000000000u);
	struct tm tm;
	if (gmtime_r(&sec, &tm) == NULL) {
		snprintf(buf, size, "?");
		return;
	}
	size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%09lluZ", (unsigned long long)(ns % 1000000000u));
}

/* Open files ------------------------------------------------------------------ */

static struct rlimit files_limit;
static bool files_raised;

void cli_raise_open_files(void)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur >= r.rlim_max)
		return;
	files_limit = r;
	r.rlim_cur = r.rlim_max;
	files_raised = setrlimit(RLIMIT_NOFILE, &r) == 0;
}

void cli_restore_open_files(void)
{
	if (files_raised)
		setrlimit(RLIMIT_NOFILE, &files_limit);
}
