/* leaksnap addr2line: addresses of one ELF file to functions and source
 * lines, in GNU addr2line's plain format or llvm-symbolizer's JSON. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <leaksnap/symbolizer.h>

#include "cli.h"

static const char addr2line_usage[] =
	"Usage: leaksnap addr2line -e FILE [OPTIONS] [ADDRESS...]\n\n"
	"Print the source line (and with -f the function) of each ADDRESS in the ELF\n"
	"file FILE, reading its DWARF in-process (the file's own, a .gnu_debuglink\n"
	"file, or /usr/lib/debug/.build-id). Addresses are hexadecimal, with or\n"
	"without 0x (or +), and are looked up exactly as given; a blank one is 0,\n"
	"as in GNU addr2line. With no ADDRESS, addresses are read from standard\n"
	"input, one per line, and each answer is written as soon as it is known.\n\n"
	"Options:\n"
	"  -e, --exe FILE    the ELF file (required)\n"
	"  -a, --addresses   print each address before its answer\n"
	"  -f, --functions   print function names\n"
	"  -i, --inlines     print the frames the address is inlined into, too\n"
	"  -C, --demangle    demangle C++ and Rust names\n"
	"  -j, --json        llvm-symbolizer's JSON (--output-style=JSON): one object\n"
	"                    per address with every inlined frame, names demangled;\n"
	"                    an array when the addresses are on the command line\n"
	"  --debuginfod URL  ask this debuginfod server for FILE's debug file by its\n"
	"                    build ID when it has no DWARF and none is here\n"
	"                    (repeatable; default: the servers in DEBUGINFOD_URLS)\n"
	"  --no-debuginfod   ask no debuginfod server (files it fetched before, in\n"
	"                    its cache, are still used)\n"
	"  --offline         use no network at all (today: as --no-debuginfod)\n"
	"  -h, --help        this help\n\n"
	"Plain output is GNU addr2line's for the same flags: 'FUNCTION' and\n"
	"'FILE:LINE' lines, '?" "?' and '?" "?:0' when nothing is known.\n\n"
	"Exit status: 0 success, 2 any error (an address that cannot be parsed is\n"
	"answered as unknown, reported on stderr, and makes the status 2).\n";

struct a2l {
	struct leaksnap_sym_file *file;
	const char *module;   /* -e as given */
	bool addresses, functions, inlines, json;
	bool tty;             /* stdout is a terminal */
	unsigned addr_width;  /* hex digits for -a */
};

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
				 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool parse_address(const char *s, uint64_t *out)
{
	while (isspace((unsigned char)*s))
		s++;
	/* as GNU addr2line: a blank line is address 0 (answered "??"), and a
	 * leading '+' is allowed */
	if (!*s) {
		*out = 0;
		return true;
	}
	if (*s == '+')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (hex_digit(*s) < 0)
		return false;
	uint64_t v = 0;
	for (int d; (d = hex_digit(*s)) >= 0; s++) {
		if (v >> 60)
			return false; /* more than 64 bits */
		v = v << 4 | (unsigned)d;
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s)
		return false;
	*out = v;
	return true;
}

/* Answers ----------------------------------------------------------------
 * The addresses at hand (the command line, or the lines read so far) are
 * looked up as one batch (with threads, the symbolizer finds them ahead as
 * units get indexed); the answers come in order. */

struct answers {
	const struct a2l *o;
	const uint64_t *addrs;
	const bool *bad;                /* per address: did not parse */
	void (*say_bad)(void *, size_t);
	void *bad_ctx;
	json_t *array;                  /* JSON array mode */
	int status;
};

/* Plain output is most of what addr2line writes: it is put together in a
 * buffer of its own and handed to stdio in large blocks (stdio's calls,
 * one a string, cost more than finding the answer). */
static struct {
	char buf[1 << 16];
	size_t len;
} out;

static void out_flush(void)
{
	if (out.len)
		fwrite_unlocked(out.buf, 1, out.len, stdout);
	out.len = 0;
}

static void out_mem(const char *s, size_t n)
{
	if (n > sizeof(out.buf) - out.len) {
		out_flush();
		if (n > sizeof(out.buf)) {
			fwrite_unlocked(s, 1, n, stdout);
			return;
		}
	}
	memcpy(out.buf + out.len, s, n);
	out.len += n;
}

static void out_str(const char *s)
{
	out_mem(s, strlen(s));
}

static void out_char(char c)
{
	if (out.len == sizeof(out.buf))
		out_flush();
	out.buf[out.len++] = c;
}

static void out_uint(unsigned long long v)
{
	char b[24], *p = b + sizeof(b);
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	out_mem(p, (size_t)(b + sizeof(b) - p));
}

static void print_plain(const struct a2l *o, uint64_t addr, const struct leaksnap_sym_result *r)
{
	if (o->addresses) {
		char b[24];
		int n = snprintf(b, sizeof(b), "0x%0*llx\n", (int)o->addr_width,
				 (unsigned long long)addr);
		out_mem(b, (size_t)n);
	}
	if (r->frame_count == 0) {
		if (o->functions)
			out_str("??\n");
		out_str("??:0\n");
		return;
	}
	/* GNU addr2line repeats the innermost row's discriminator on every
	 * inlined frame it prints */
	unsigned disc = r->frames[0].discriminator;
	for (size_t i = 0; i < r->frame_count; i++) {
		const struct leaksnap_sym_frame *f = &r->frames[i];
		if (o->functions) {
			out_str(f->function && *f->function ? f->function : "??");
			out_char('\n');
		}
		out_str(f->file ? f->file : "??");
		out_char(':');
		if (!f->line) {
			out_char('?');
		} else {
			out_uint(f->line);
			if (disc) {
				out_str(" (discriminator ");
				out_uint(disc);
				out_char(')');
			}
		}
		out_char('\n');
		if (!o->inlines)
			break;
	}
}

static json_t *json_answer(const struct a2l *o, uint64_t addr, const struct leaksnap_sym_result *r)
{
	json_t *symbols = json_array();
	size_t n = r->frame_count ? r->frame_count : 1;
	for (size_t i = 0; i < n; i++) {
		static const struct leaksnap_sym_frame none;
		const struct leaksnap_sym_frame *f = r->frame_count ? &r->frames[i] : &none;
		char start[24] = "";
		if (f->has_start)
			snprintf(start, sizeof(start), "0x%llx",
				 (unsigned long long)f->start_address);
		json_array_append_new(
			symbols,
			json_pack("{s:I, s:I, s:o, s:o, s:I, s:s, s:o, s:I}", "Column",
				  (json_int_t)f->column, "Discriminator",
				  (json_int_t)f->discriminator, "FileName",
				  kit_json_text(f->file ? f->file : ""), "FunctionName",
				  kit_json_text(f->function ? f->function : ""), "Line",
				  (json_int_t)f->line, "StartAddress", start, "StartFileName",
				  kit_json_text(f->start_file ? f->start_file : ""), "StartLine",
				  (json_int_t)f->start_line));
	}
	return json_pack("{s:o, s:o, s:o}", "Address", kit_json_addr(addr), "ModuleName",
			 kit_json_text(o->module),
			 "Symbol", symbols);
}

/* Encoded into a buffer and written at once: json_dumpf writes token by
 * token, which costs more than finding the answer. */
static void json_out(json_t *v)
{
	static char *buf;
	static size_t cap;
	size_t flags = JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY;
	size_t n = json_dumpb(v, buf, cap, flags);
	if (n > cap) {
		free(buf);
		cap = n * 2;
		buf = malloc(cap);
		n = buf ? json_dumpb(v, buf, cap, flags) : 0;
	}
	if (n && n <= cap)
		fwrite(buf, 1, n, stdout);
	json_decref(v);
}

static void on_answer(void *ctx, size_t index, const struct leaksnap_sym_result *r,
		      const struct leaksnap_error *err)
{
	struct answers *a = ctx;
	if (a->bad[index]) {
		a->say_bad(a->bad_ctx, index);
		a->status = EXIT_ERROR;
	}
	if (err) {
		cli_fail_error(err);
		a->status = EXIT_ERROR;
	}
	uint64_t addr = a->addrs[index];
	if (!a->o->json) {
		print_plain(a->o, addr, r);
		if (a->o->tty)
			out_flush(); /* (each answer seen as it comes) */
	} else if (a->array) {
		json_array_append_new(a->array, json_answer(a->o, addr, r));
	} else {
		json_out(json_answer(a->o, addr, r));
		putchar('\n');
	}
}

/* Answer @count addresses (@bad[i]: line i did not parse, said by
 * @say_bad; it is answered as unknown).  EXIT_OK or EXIT_ERROR. */
static int answer_all(struct a2l *o, const uint64_t *addrs, const bool *bad, size_t count,
		      void (*say_bad)(void *, size_t), void *bad_ctx, json_t *array)
{
	struct answers a = {o, addrs, bad, say_bad, bad_ctx, array, EXIT_OK};
	leaksnap_sym_file_lookup_batch(o->file, addrs, count, on_answer, &a);
	out_flush();
	return a.status;
}

static void say_bad_arg(void *ctx, size_t i)
{
	char **args = ctx;
	cli_fail(args[i], "not a hexadecimal address");
}

struct stdin_lines {
	unsigned long first; /* the line number of the batch's first line */
};

static void say_bad_line(void *ctx, size_t i)
{
	const struct stdin_lines *l = ctx;
	cli_fail("<stdin>", "line %lu: not a hexadecimal address", l->first + (unsigned long)i);
}

/* Input ready to read now (without waiting). */
static bool readable_now(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP));
}

/* Standard input: lines are read as they come, and every line at hand --
 * whatever can be read without waiting, up to a batch's worth -- is
 * answered, and the answers flushed, before waiting for more. */
#define BATCH_BYTES (1u << 20)
#define LINE_MAX_BYTES (1u << 24)

struct stdin_buf {
	char *buf;
	size_t cap, have, pos; /* unread: buf[pos..have) */
	bool eof;
};

/* Room at the end of @in's buffer: the unread part moved to its start
 * (always with @compact, else when the buffer is full), and the buffer
 * doubled while it is full, up to @max bytes.  false: no room. */
static bool make_room(struct stdin_buf *in, bool compact, size_t max)
{
	if (compact || in->have == in->cap) {
		memmove(in->buf, in->buf + in->pos, in->have - in->pos);
		in->have -= in->pos;
		in->pos = 0;
	}
	if (in->have < in->cap)
		return true;
	char *nb = in->cap < max ? realloc(in->buf, in->cap * 2) : NULL;
	if (!nb)
		return false;
	in->buf = nb;
	in->cap *= 2;
	return true;
}

/* One read(2) into that room: 0 (interrupted: nothing read), or -1 with
 * errno set; the end of the input sets in->eof. */
static int read_some(struct stdin_buf *in)
{
	ssize_t n = read(0, in->buf + in->have, in->cap - in->have);
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	if (n == 0)
		in->eof = true;
	in->have += (size_t)n;
	return 0;
}

/* Read until a whole line is at hand, or the end of the input (line
 * @lineno + 1 is the first unread).  0; -1 (printed); 1: the answers
 * could not be written (said when stdout is finished). */
static int wait_line(struct stdin_buf *in, unsigned long lineno)
{
	while (!in->eof && !memchr(in->buf + in->pos, '\n', in->have - in->pos)) {
		if (fflush(stdout) != 0)
			return 1;
		if (!make_room(in, true, LINE_MAX_BYTES))
			return cli_fail("<stdin>", "line %lu: line too long", lineno + 1);
		if (read_some(in) != 0)
			return cli_fail("<stdin>", "read error: %s", strerror(errno));
	}
	return 0;
}

/* Add what else can be read without waiting, up to a batch's worth (a
 * failure here is left to the read that waits). */
static void read_ready(struct stdin_buf *in)
{
	while (!in->eof && in->have - in->pos < BATCH_BYTES && readable_now(0))
		if (!make_room(in, false, SIZE_MAX) || read_some(in) != 0)
			break;
}

/* The end of the whole lines unread (and at the end of the input, of a
 * last one without '\n', given room for its '\0') in *@end: 0, or -1
 * (printed). */
static int lines_end(struct stdin_buf *in, size_t *end)
{
	if (!in->eof) {
		char *nl = memrchr(in->buf + in->pos, '\n', in->have - in->pos);
		*end = (size_t)(nl - in->buf) + 1;
		return 0;
	}
	if (in->have == in->cap) {
		char *nb = realloc(in->buf, in->cap + 1);
		if (!nb)
			return cli_fail("addr2line", "out of memory");
		in->buf = nb;
		in->cap++;
	}
	*end = in->have;
	return 0;
}

/* The addresses of one batch of lines. */
struct batch {
	uint64_t *addrs;
	bool *bad; /* per line: did not parse (answered as unknown) */
	size_t count, cap;
};

/* Parse the lines at [@p, @end) (each line's '\n', or @end, is overwritten
 * with '\0') into @b.  0, or -1 (printed). */
static int parse_lines(const struct a2l *o, struct batch *b, char *p, char *end)
{
	b->count = 0;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *stop = nl ? nl : end;
		if (b->count == b->cap) {
			size_t n = b->cap ? b->cap * 2 : 1024;
			uint64_t *na = realloc(b->addrs, n * sizeof(*na));
			bool *nbad = na ? realloc(b->bad, n * sizeof(*nbad)) : NULL;
			if (na)
				b->addrs = na;
			if (!nbad)
				return cli_fail("addr2line", "out of memory");
			b->bad = nbad;
			b->cap = n;
		}
		*stop = '\0';
		size_t i = b->count;
		b->addrs[i] = 0;
		b->bad[i] = !parse_address(p, &b->addrs[i]);
		if (b->bad[i])
			b->addrs[i] = 0; /* answered as unknown */
		if (++b->count == 1024) /* threads start on these meanwhile */
			leaksnap_sym_file_prefetch(o->file, b->addrs, b->count);
		p = stop + 1;
	}
	return 0;
}

/* Answer the addresses on standard input: EXIT_OK, or EXIT_ERROR (each
 * problem said). */
static int answer_stdin(struct a2l *o)
{
	struct stdin_buf in = {.cap = 1 << 16};
	struct batch b = {0};
	unsigned long lineno = 0;
	int status = EXIT_OK;
	in.buf = malloc(in.cap);
	if (!in.buf) {
		cli_fail("addr2line", "out of memory");
		return EXIT_ERROR;
	}
	for (;;) {
		int r = wait_line(&in, lineno);
		if (r != 0) {
			if (r < 0)
				status = EXIT_ERROR;
			break; /* (r > 0: said when stdout is finished) */
		}
		read_ready(&in);
		if (in.pos == in.have)
			break; /* (eof) */
		size_t end = 0;
		if (lines_end(&in, &end) || parse_lines(o, &b, in.buf + in.pos, in.buf + end)) {
			status = EXIT_ERROR;
			break;
		}
		struct stdin_lines l = {lineno + 1};
		lineno += b.count;
		if (answer_all(o, b.addrs, b.bad, b.count, say_bad_line, &l, NULL) != EXIT_OK)
			status = EXIT_ERROR;
		in.pos = end;
	}
	free(in.buf);
	free(b.addrs);
	free(b.bad);
	return status;
}

/* Answer the @n addresses at @args, the command line's: EXIT_OK, or
 * EXIT_ERROR (each problem said). */
static int answer_args(struct a2l *o, char **args, size_t n)
{
	uint64_t *addrs = malloc(n * sizeof(*addrs));
	bool *bad = malloc(n * sizeof(*bad));
	json_t *array = o->json ? json_array() : NULL;
	int status = EXIT_ERROR;
	if (!addrs || !bad || (o->json && !array)) {
		cli_fail("addr2line", "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		bad[i] = !parse_address(args[i], &addrs[i]);
		if (bad[i])
			addrs[i] = 0; /* answered as unknown */
	}
	status = answer_all(o, addrs, bad, n, say_bad_arg, args, array);
	if (array) {
		json_out(array);
		array = NULL;
		putchar('\n');
	}
out:
	json_decref(array);
	free(addrs);
	free(bad);
	return status;
}

/* Read the options into @o and *@demangle: 0, CLI_HELP_SHOWN, or -1
 * (printed). */
static int parse_options(int argc, char **argv, struct a2l *o, bool *demangle)
{
	static const struct option longopts[] = {
		{"exe", required_argument, NULL, 'e'},
		{"addresses", no_argument, NULL, 'a'},
		{"functions", no_argument, NULL, 'f'},
		{"inlines", no_argument, NULL, 'i'},
		{"demangle", no_argument, NULL, 'C'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		CLI_DEBUGINFOD_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	int c, r;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":e:afiCjh", longopts, NULL)) != -1) {
		if ((r = cli_debuginfod_option("addr2line", c, optarg)) != 0) {
			if (r != 1)
				return -1;
			continue;
		}
		switch (c) {
		case 'e': o->module = optarg; break;
		case 'a': o->addresses = true; break;
		case 'f': o->functions = true; break;
		case 'i': o->inlines = true; break;
		case 'C': *demangle = true; break;
		case 'j': o->json = true; break;
		case 'h':
			fputs(addr2line_usage, stdout);
			return cli_finish_stdout(EXIT_OK) == EXIT_OK ? CLI_HELP_SHOWN : -1;
		default:
			return cli_bad_option("addr2line", argv, c == ':' ? ':' : optopt);
		}
	}
	if (!o->module)
		return cli_usage_error("addr2line", "missing -e FILE");
	char *module = (char *)(uintptr_t)o->module;
	return cli_no_empty_names(&module, 1);
}

int cmd_addr2line(int argc, char **argv)
{
	struct a2l o = {0};
	bool demangle = false;
	int r = parse_options(argc, argv, &o, &demangle);
	if (r != 0)
		return r == CLI_HELP_SHOWN ? EXIT_OK : EXIT_ERROR;
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	LEAKSNAP_OPTS(leaksnap_sym_options, so, .demangle = demangle || o.json,
		      .llvm_names = o.json, .jobs = cli_sym_jobs(),
		      .debuginfod = cli_debuginfod());
	struct leaksnap_symbolizer *sym = leaksnap_symbolizer_new(&so, &err);
	if (!sym) {
		cli_fail_error(&err);
		return EXIT_ERROR;
	}
	o.file = leaksnap_symbolizer_open(sym, o.module, &err);
	if (!o.file) {
		leaksnap_symbolizer_free(sym);
		cli_fail_error(&err);
		return EXIT_ERROR;
	}
	o.addr_width = leaksnap_sym_file_address_size(o.file) * 2; /* as binutils prints it */
	/* answers come in batches: written in large blocks, unless to a
	 * terminal (where each is seen as soon as it is written) */
	static char outbuf[1 << 18]; /* (glibc sizes its own by st_blksize) */
	o.tty = isatty(1) == 1;
	if (!o.tty)
		setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	int status = optind < argc ? answer_args(&o, argv + optind, (size_t)(argc - optind))
				   : answer_stdin(&o);
	leaksnap_symbolizer_free(sym);
	return cli_finish_stdout(status);
}
