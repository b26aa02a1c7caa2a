/* leaksnap CLI: shared declarations.  The CLI is the only code that prints. */
#ifndef LEAKSNAP_CLI_H
#define LEAKSNAP_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "kit_json.h"
#include <leaksnap/maps.h>
#include <leaksnap/resolve.h>
#include <leaksnap/snapshot.h>
#include <leaksnap/symbolizer.h>

/* Exit statuses (documented in --help and the README).
 *
 * Return values, one rule: a function that printed an error returns -1
 * (never an exit status); a command (cmd_*) returns an exit status below;
 * main() takes a negative one for EXIT_ERROR, defensively.  --help printed
 * is success: a command's option parser says so with CLI_HELP_SHOWN, and
 * the command returns EXIT_OK. */
enum {
	EXIT_OK = 0,
	EXIT_LEAKS = 1,   /* leakdiff --fail-on: growth at or above the limit */
	EXIT_ERROR = 2,   /* usage, unreadable or malformed input, I/O */
};

/* What a command's option parser returns besides 0 (go on) and -1 (an
 * error, printed): the help (or the version) was printed and written out;
 * the command ends there with EXIT_OK. */
enum { CLI_HELP_SHOWN = 1 };

#define LEAKSNAP_VERSION_STRING "0.1.0"

/* --version: "@prog VERSION", then one line per library ("libdw 0.188") as
 * the libraries report themselves (version.c).  Returns the exit status. */
int cli_print_version(const char *prog);

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

int cmd_show(int argc, char **argv);
int cmd_maps(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_diff(int argc, char **argv);
/* leakdiff's options alone, as cmd_diff reads them (no snapshot looked
 * at; watch --leakdiff asks before saying that it has too few): 0,
 * CLI_HELP_SHOWN, or -1 after leakdiff's own message. */
int diff_check_options(int argc, char **argv);
int cmd_addr2line(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_adb(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_store(int argc, char **argv);
int cmd_history(int argc, char **argv);

/* The symbolizer's jobs option (struct leaksnap_sym_options): the CPUs this process
 * may run on (at most 4), or LEAKSNAP_JOBS when set (0 to 64; 0 or 1: no
 * threads).  symctx.c */
unsigned cli_sym_jobs(void);

/* Where debug files come from besides this host: the debuginfod options
 * of every command that symbolizes (symctx.c).  One setting for the
 * process: --debuginfod URL (repeatable, or several URLs in one, space
 * separated) sets DEBUGINFOD_URLS for this run; --no-debuginfod and
 * --offline ask no server. */
enum { CLI_OPT_DEBUGINFOD = 0x1100, CLI_OPT_NO_DEBUGINFOD, CLI_OPT_OFFLINE };
#define CLI_DEBUGINFOD_LONGOPTS                                            \
	{"debuginfod", required_argument, NULL, CLI_OPT_DEBUGINFOD},       \
	{"no-debuginfod", no_argument, NULL, CLI_OPT_NO_DEBUGINFOD},       \
	{"offline", no_argument, NULL, CLI_OPT_OFFLINE}
#define CLI_DEBUGINFOD_HELP                                                             \
	"  --debuginfod URL     ask this debuginfod server for the debug files (and\n"     \
	"                       files) of modules by build ID when they are not here\n"    \
	"                       (repeatable; default: the servers in DEBUGINFOD_URLS)\n"   \
	"  --no-debuginfod      ask no debuginfod server (files it fetched before,\n"    \
	"                       in its cache, are still used)\n"                          \
	"  --offline            use no network at all (today: as --no-debuginfod)\n"
/* Apply option @c (from CLI_DEBUGINFOD_LONGOPTS) with @arg.  Returns 1 if
 * @c is one of them, 0 if not, -1 (printed) for a bad value or a
 * contradiction. */
int cli_debuginfod_option(const char *cmd, int c, const char *arg);
/* Whether debuginfod servers are to be asked: one is named (--debuginfod,
 * DEBUGINFOD_URLS) and neither --no-debuginfod nor --offline was given. */
bool cli_debuginfod(void);
/* The warning for a module whose file has no symbols, with the ways to
 * get them (a leaksnap_resolve_module_fn; @arg is unused). */
void cli_say_no_symbols(void *arg, const struct leaksnap_sym_module *m);

/* Symbolizing a snapshot's frames (symctx.c). */
struct cli_symctx;
/* NULL when out of memory.  @maps (may be NULL) are @s's: a module found
 * only as a debug-only file takes its layout from them. */
struct cli_symctx *cli_symctx_new(const struct leaksnap_snapshot *s,
				  const struct leaksnap_maps *maps, const char *const *dirs,
				  size_t ndirs, bool adjust);
void cli_symctx_free(struct cli_symctx *c);
/* Hint: the frames of @records[0..count) of @s are about to be resolved
 * (their units are indexed ahead, on threads: cli_sym_jobs). */
void cli_symctx_prefetch(struct cli_symctx *c, const struct leaksnap_maps *maps,
			 const struct leaksnap_snapshot *s, const size_t *records, size_t count);
/* Symbolize the frame at @loc (each module and rel_pc once).  Problems
 * with symbol files are reported on stderr as they are met.  -1: out of
 * memory (reported). */
int cli_symctx_resolve(struct cli_symctx *c, const struct leaksnap_maps_location *loc,
		       struct leaksnap_resolved *out);
/* Progress on stderr when it is a terminal and symbolizing takes a while;
 * _end erases it. */
void cli_symctx_progress(struct cli_symctx *c, size_t done, size_t total);
void cli_symctx_progress_end(struct cli_symctx *c);
/* EXIT_ERROR once a symbol file was unreadable, else EXIT_OK. */
int cli_symctx_status(const struct cli_symctx *c);
size_t cli_symctx_module_count(const struct cli_symctx *c);
const struct leaksnap_sym_module *cli_symctx_module(const struct cli_symctx *c, size_t i);

/* Rendering a symbolized frame (render.c).  The symbolized part of a text
 * frame line ("  function  file:line:column", "(no symbol file)", ...)
 * and one "inlined into" line per caller; @r->module must be set unless
 * @r has frames (a store's answers name no symbol file). */
void cli_print_symbols(const struct leaksnap_resolved *r);
/* The same with inline level @mark (1: the function the frame's innermost
 * one is inlined into, ...) marked with "> "; SIZE_MAX marks none. */
void cli_print_symbols_marked(const struct leaksnap_resolved *r, size_t mark);
/* Function names as the text shows them: shortened (kit_names.h) with
 * cli_ellipsis(), unless --full-names (cli_set_full_names(true)).
 * cli_name returns @name itself, or a buffer valid until its next call;
 * NULL for NULL. */
void cli_set_full_names(bool on);
bool cli_full_names(void);
const char *cli_name(const char *name);
/* "…" (U+2026) when the locale (LC_ALL, LC_CTYPE, LANG: the first set)
 * is UTF-8, else "...". */
/* The mark of an estimate (a sampled snapshot's): "≈" in a UTF-8
 * locale, else "~". */
const char *cli_approx(void);
/* "N records, B bytes in C allocations" of @s into @buf (the line a dump
 * just written is reported with); a sampled snapshot's byte and allocation
 * figures are estimates, marked, with its sampled counts after them. */
void cli_dump_totals(const struct leaksnap_snapshot *s, char *buf, size_t size);
const char *cli_ellipsis(void);
/* Whether a stack of @frames frames filled all @slots slots of its dump
 * (then it may have been cut), and the line that says so under it:
 * "    … (stack may be cut at N frames)". */
bool cli_stack_may_be_cut(size_t frames, size_t slots);
void cli_print_cut(size_t frames);
/* One element of a JSON "symbols" list: the module, the file used, its
 * build-ID status, error and layout. */
json_t *cli_json_sym_module(const struct leaksnap_sym_module *m);
/* Why a module has no symbol file: "no symbol file", "build-id mismatch"
 * or, when only files of the other ELF class were found, that. */
const char *cli_no_file_note(const struct leaksnap_sym_module *m);
/* What --verbose adds after a module's build-ID status about its layout:
 * "" when the file used has its own, else where it came from. */
const char *cli_layout_note(const struct leaksnap_sym_module *m);
/* What --verbose adds after that about the file's symbols: ", stripped"
 * for a file without (leaksnap_sym_module.no_symbols), where its debug file came from when debuginfod
 * gave it; else "" (symctx.c). */
const char *cli_debug_note(const struct leaksnap_sym_module *m);

/* The HTML report page (report/report.h) at @path, published as
 * cli_outfile_open does (a page leaksnap wrote may be replaced): 0, or
 * -1 after saying why; out of memory is said of @subject
 * (render.c). */
struct report_page;
int cli_report_page(const char *path, const struct report_page *page, const char *subject);
/* Print the error record of an export or the report page (render.c): one
 * with an empty source is the output's own, said of @output. */
void cli_fail_output(const char *output, const struct leaksnap_error *err);

/* The name messages begin with: "leaksnap", or the name the program was
 * run as when that is another command's (leakdiff). */
extern const char *cli_program_name;

/* Messages.  The cli_fail family returns -1, so that a helper may end
 * with "return cli_fail(...);"; a command writes "return EXIT_ERROR;".
 * "leaksnap: <subject>: <message>" on stderr; returns -1. */
int cli_fail(const char *subject, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print a library error record; returns -1. */
int cli_fail_error(const struct leaksnap_error *err);
/* "leaksnap: <subject>: warning: <message>" on stderr. */
void cli_warn(const char *subject, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Every warning cli_warn says is also kept, in order, for the documents
 * (--json, the HTML page), which carry them as "warnings": at most
 * CLI_WARNINGS_MAX, the rest counted.  cli_warnings_note keeps one said
 * otherwise (a problem with a symbol file, reported as an error while
 * the report goes on); @subject may be NULL. */
#define CLI_WARNINGS_MAX 100
void cli_warnings_note(const char *subject, const char *text);
/* The warnings kept, then @extra[0..nextra) (warnings of a library object
 * said at the end), as a JSON array of strings: "SUBJECT: text" as said
 * after "leaksnap: " without "warning: ", or only the text when
 * SUBJECT is @doc_file (may be NULL), the one file the document
 * describes.  Past CLI_WARNINGS_MAX, a last string says how many more
 * there were. */
json_t *cli_warnings_json(const char *doc_file, const char *const *extra, size_t nextra);
/* Usage error for subcommand @cmd: message plus a hint to --help; returns
 * -1. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse an unsigned decimal option value in [min, max]. */
bool cli_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Parse a byte count: digits, then optionally K, M or G (powers of 1024),
 * optionally followed by "B" or "iB" (leakdiff --fail-on, history
 * --fail-on-regression). */
bool cli_parse_bytes(const char *s, uint64_t *out);
/* Parse a number of seconds, DIGITS[.DIGITS] or .DIGITS (no sign, exponent
 * or other spelling strtod() would take), in [min, max]. */
bool cli_parse_seconds(const char *s, double min, double max, double *out);

/* The input options shared by every command that opens a snapshot. */
struct cli_input {
	struct leaksnap_snapshot_open_opts open;
	const char *maps_path; /* --maps FILE, or NULL */
};
/* Its initializer: no option given. */
#define CLI_INPUT_INIT {.open = {.sz = sizeof(struct leaksnap_snapshot_open_opts)}}
#define CLI_INPUT_LONGOPTS                                         \
	{"maps", required_argument, NULL, 'm'},                    \
	{"pointer-size", required_argument, NULL, 'P'},            \
	{"frames", required_argument, NULL, 'F'},                  \
	{"count-is-frames", no_argument, NULL, 'C'}
#define CLI_INPUT_HELP                                                             \
	"  --maps FILE          use FILE (/proc/PID/maps text) instead of the dump's maps\n" \
	"  --pointer-size N     raw buffers: 4 or 8\n"                                    \
	"  --frames N           raw buffers: frames per record (1..256)\n"               \
	"  --count-is-frames    the count field holds the frame count (Android 7):\n"    \
	"                       count each record as one allocation\n"
/* Apply option @c (from CLI_INPUT_LONGOPTS) with @arg to @in.  Returns 1 if
 * @c is an input option, 0 if not, -1 (printed) for a bad value. */
int cli_input_option(const char *cmd, int c, const char *arg, struct cli_input *in);
/* Checks once all options are read: -1 (printed) or 0. */
int cli_input_check(const char *cmd, const struct cli_input *in);
/* A library text (error or warning) as the user should read it: the
 * leaksnap_snapshot_open_opts fields it names as "opts.FIELD" become the options that
 * set them ("--pointer-size").  Returns @text itself when nothing changes,
 * else @buf. */
const char *cli_input_text(const char *text, char *buf, size_t size);
/* The same, in place, for the text of @err; a maps file given as a
 * snapshot is told so, with the command that reads it. */
void cli_input_error(struct leaksnap_error *err);
/* -1 (said: "'': No such file or directory") when one of the @n file
 * names at @names is empty, as the system would say, but naming it: a
 * library error of an empty name would name none.  Else 0. */
int cli_no_empty_names(char **names, int n);
/* -1 (said) unless each of the @n --symbols trees at @dirs is a directory. */
int cli_symbol_dirs_check(const char *const *dirs, size_t n);
/* -1 (said) when both @a and @b (either may be NULL) are "-": standard
 * input can be read once.  Else 0. */
int cli_stdin_once(const char *a, const char *b);

/* Report an unknown option or missing argument seen by getopt_long;
 * returns -1. */
int cli_bad_option(const char *cmd, char **argv, int optopt_value);

/* Read all of @path ("-" = stdin) into a NUL-terminated heap buffer.
 * Returns 0, or -1 after printing the error. */
int cli_read_file(const char *path, size_t max, const char *what, char **text, size_t *len);
/* Bigger inputs are refused ("FILE: more than N MiB: too large for WHAT"). */
#define CLI_MAPS_MAX ((size_t)256 << 20)
/* JSON object for one mapping (shared by show and maps). */
json_t *cli_json_mapping(const struct leaksnap_maps_mapping *m);

/* Print the snapshot's warnings (call once the input is known to be good,
 * so that a failing input yields exactly one line on stderr). */
void cli_print_warnings(const struct leaksnap_snapshot *snap);
/* Open a snapshot and optionally replace its maps with
 * @maps_path.  Returns NULL after printing the error. */
struct leaksnap_snapshot *cli_open_snapshot(const char *path,
					    const struct leaksnap_snapshot_open_opts *opts,
					    const char *maps_path);
/* Parse the snapshot's maps (NULL maps when it has none: every PC is then
 * unmapped).  Returns 0, or -1 (*@out NULL) after printing the error,
 * which points into the file the maps came from. */
int cli_snapshot_maps(const struct leaksnap_snapshot *snap, const char *maps_path,
		      struct leaksnap_maps **out);

/* What an output may replace: nothing, or a file of the same kind that
 * leaksnap wrote itself (an HTML report with its generator tag, a pprof
 * profile whose gzip header carries LEAKSNAP_EXPORT_PPROF_DIFF_COMMENT;
 * the page's generator tag is REPORT_GENERATOR), so that a
 * report can be made again under its old name while nothing else the
 * user has is ever overwritten. */
enum cli_replace { CLI_REPLACE_NONE, CLI_REPLACE_OWN_HTML, CLI_REPLACE_OWN_PPROF };

/* An output file written through stdio (outfile.c): a temporary name beside
 * @path, published complete by cli_outfile_close.  An existing regular
 * file is replaced (keeping its mode) only as @replace allows; a symlink
 * or anything else is refused.  "-" is standard output.  Each returns
 * 0, or -1 after saying why. */
struct cli_outfile {
	FILE *f;
	const char *path;
	char *tmp;
	unsigned mode;
	enum cli_replace replace;
	bool keep_mode;
};
int cli_outfile_open(struct cli_outfile *o, const char *path, enum cli_replace replace);
/* The checks of cli_outfile_open, before any work is done: -1 (said)
 * if @path could not be written (an existing file it may not
 * replace, a missing directory, no permission). */
int cli_outfile_check(const char *path, enum cli_replace replace);
/* Flush, fsync and publish when @ok; otherwise remove the temporary. */
int cli_outfile_close(struct cli_outfile *o, bool ok);
/* -1 (said) when @path names the same file as one of @inputs
 * (NULL entries skipped): a report never replaces what it was made from. */
int cli_outfile_not_input(const char *path, char *const *inputs, size_t n);

/* @ns (since the Unix epoch) as "YYYY-MM-DDTHH:MM:SS.NNNNNNNNNZ". */
void cli_format_time(uint64_t ns, char *buf, size_t size);

/* Finish stdout at the end of a command whose exit status so far is
 * @status: EXIT_ERROR when anything failed to be written (said), else
 * @status.  After an error (@status EXIT_ERROR, or negative: taken for
 * EXIT_ERROR) stdout is only flushed. */
int cli_finish_stdout(int status);

/* Text for a terminal (tty.c).  cli_escape() copies @n bytes of @buf (at
 * most CLI_ESCAPE_CHUNK) to @out (CLI_ESCAPE_OUT bytes), showing as \xNN
 * every byte a terminal could act on: C0 controls (newline and tab pass when
 * e->newlines), DEL, C1 controls and bytes outside well-formed UTF-8.  An
 * unfinished character at the end waits in @e for the next call unless
 * @final.  Returns the bytes written to @out. */
#define CLI_ESCAPE_CHUNK 4096
#define CLI_ESCAPE_OUT (4 * (CLI_ESCAPE_CHUNK + 4) + 1)
struct cli_escaper {
	unsigned char pend[4];
	size_t npend;
	bool newlines;
};
size_t cli_escape(struct cli_escaper *e, const char *buf, size_t n, bool final, char *out);
/* Writes @s to @f escaped as cli_escape() does. */
void cli_put_escaped(FILE *f, const char *s, bool newlines);
/* When standard output is a terminal, route it through cli_escape(). */
void cli_guard_terminal(void);

/* The symbolizer keeps each module's files open (two or three descriptors
 * a module; an Android process maps hundreds of modules): raise this
 * process's soft limit on open files to its hard limit, and, in a child
 * about to run another program (record, adb), put it back. */
void cli_raise_open_files(void);
void cli_restore_open_files(void);


#endif
