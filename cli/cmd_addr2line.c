/* leaksnap addr2line: addresses of one ELF file to functions and source
 * lines, in GNU addr2line's plain format or llvm-symbolizer's JSON. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
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
	"without 0x, and are looked up exactly as given. With no ADDRESS, addresses\n"
	"are read from standard input, one per line, and each answer is written as\n"
	"soon as it is known.\n\n"
	"Options:\n"
	"  -e, --exe FILE    the ELF file (required)\n"
	"  -a, --addresses   print each address before its answer\n"
	"  -f, --functions   print function names\n"
	"  -i, --inlines     print the frames the address is inlined into, too\n"
	"  -C, --demangle    demangle C++ and Rust names\n"
	"  -j, --json        llvm-symbolizer's JSON (--output-style=JSON): one object\n"
	"                    per address with every inlined frame, names demangled;\n"
	"                    an array when the addresses are on the command line\n"
	"  -h, --help        this help\n\n"
	"Plain output is GNU addr2line's for the same flags: 'FUNCTION' and\n"
	"'FILE:LINE' lines, '?" "?' and '?" "?:0' when nothing is known.\n\n"
	"Exit status: 0 success, 2 any error (an address that cannot be parsed is\n"
	"answered as unknown, reported on stderr, and makes the status 2).\n";

struct a2l {
	struct sym_file *file;
	const char *module;   /* -e as given */
	bool addresses, functions, inlines, json;
	unsigned addr_width;  /* hex digits for -a */
};

static bool parse_address(const char *s, uint64_t *out)
{
	while (isspace((unsigned char)*s))
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!isxdigit((unsigned char)*s))
		return false;
	uint64_t v = 0;
	for (; isxdigit((unsigned char)*s); s++) {
		if (v >> 60)
			return false; /* more than 64 bits */
		unsigned d = (unsigned)(isdigit((unsigned char)*s) ? *s - '0'
								 : tolower((unsigned char)*s) - 'a' + 10);
		v = v << 4 | d;
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s)
		return false;
	*out = v;
	return true;
}

static void print_plain(const struct a2l *o, uint64_t addr, const struct sym_result *r)
{
	if (o->addresses)
		printf("0x%0*llx\n", (int)o->addr_width, (unsigned long long)addr);
	if (r->frame_count == 0) {
		if (o->functions)
			printf("??\n");
		printf("??:0\n");
		return;
	}
	/* GNU addr2line repeats the innermost row's discriminator on every
	 * inlined frame it prints */
	unsigned disc = r->frames[0].discriminator;
	for (size_t i = 0; i < r->frame_count; i++) {
		const struct sym_frame *f = &r->frames[i];
		if (o->functions)
			printf("%s\n", f->function && *f->function ? f->function : "??");
		printf("%s:", f->file ? f->file : "??");
		if (!f->line)
			printf("?\n");
		else if (disc)
			printf("%u (discriminator %u)\n", f->line, disc);
		else
			printf("%u\n", f->line);
		if (!o->inlines)
			break;
	}
}

static json_t *json_answer(const struct a2l *o, uint64_t addr, const struct sym_result *r)
{
	json_t *symbols = json_array();
	size_t n = r->frame_count ? r->frame_count : 1;
	for (size_t i = 0; i < n; i++) {
		static const struct sym_frame none;
		const struct sym_frame *f = r->frame_count ? &r->frames[i] : &none;
		char start[24] = "";
		if (f->has_start)
			snprintf(start, sizeof(start), "0x%llx", (unsigned long long)f->start_address);
		json_array_append_new(
			symbols,
			json_pack("{s:I, s:I, s:s, s:s, s:I, s:s, s:s, s:I}", "Column",
				  (json_int_t)f->column, "Discriminator", (json_int_t)f->discriminator,
				  "FileName", f->file ? f->file : "", "FunctionName",
				  f->function ? f->function : "", "Line", (json_int_t)f->line,
				  "StartAddress", start, "StartFileName",
				  f->start_file ? f->start_file : "", "StartLine",
				  (json_int_t)f->start_line));
	}
	return json_pack("{s:o, s:s, s:o}", "Address", cli_json_addr(addr), "ModuleName", o->module,
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

/* Answer one address; returns 0, or 1 when its DWARF is corrupt (reported). */
static int answer(struct a2l *o, uint64_t addr, json_t *array)
{
	struct sym_result r;
	static struct leaksnap_error err; /* cleared after use: it is large */
	int bad = 0;
	if (sym_file_lookup(o->file, addr, &r, &err) != 0) {
		cli_fail_error(&err);
		leaksnap_error_clear(&err);
		r.frames = NULL;
		r.frame_count = 0;
		bad = 1;
	}
	if (!o->json) {
		print_plain(o, addr, &r);
	} else {
		json_t *v = json_answer(o, addr, &r);
		if (array) {
			json_array_append_new(array, v);
		} else {
			json_out(v);
			putchar('\n');
		}
	}
	return bad;
}

int cmd_addr2line(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"exe", required_argument, NULL, 'e'},
		{"addresses", no_argument, NULL, 'a'},
		{"functions", no_argument, NULL, 'f'},
		{"inlines", no_argument, NULL, 'i'},
		{"demangle", no_argument, NULL, 'C'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct a2l o = {0};
	bool demangle = false;
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":e:afiCjh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e': o.module = optarg; break;
		case 'a': o.addresses = true; break;
		case 'f': o.functions = true; break;
		case 'i': o.inlines = true; break;
		case 'C': demangle = true; break;
		case 'j': o.json = true; break;
		case 'h':
			fputs(addr2line_usage, stdout);
			return cli_finish_stdout(EXIT_OK);
		default:
			return cli_bad_option("addr2line", argv, c == ':' ? ':' : optopt);
		}
	}
	if (!o.module)
		return cli_usage_error("addr2line", "missing -e FILE");
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	struct sym_options so = {.demangle = demangle || o.json, .llvm_names = o.json};
	struct symbolizer *sym = symbolizer_new(&so, &err);
	if (!sym)
		return cli_fail_error(&err);
	o.file = symbolizer_open(sym, o.module, &err);
	if (!o.file) {
		symbolizer_free(sym);
		return cli_fail_error(&err);
	}
	o.addr_width = sym_file_address_size(o.file) * 2; /* as binutils prints it */
	int status = EXIT_OK;
	if (optind < argc) {
		json_t *array = o.json ? json_array() : NULL;
		for (int i = optind; i < argc; i++) {
			uint64_t addr = 0;
			if (!parse_address(argv[i], &addr)) {
				cli_fail(argv[i], "not a hexadecimal address");
				status = EXIT_ERROR;
				addr = 0;
			}
			if (answer(&o, addr, array))
				status = EXIT_ERROR;
		}
		if (array) {
			json_out(array);
			putchar('\n');
		}
	} else {
		/* Lines are read in blocks: every answer to the lines at hand is
		 * written, and flushed before waiting for more input, so a
		 * program that writes one address and waits gets its answer. */
		size_t cap = 1 << 16, have = 0, pos = 0; /* unread: buf[pos..have) */
		char *buf = malloc(cap);
		unsigned long lineno = 0;
		bool eof = false;
		if (!buf) {
			symbolizer_free(sym);
			return cli_fail("addr2line", "out of memory");
		}
		while (!eof || pos < have) {
			char *nl = memchr(buf + pos, '\n', have - pos);
			if (!nl && !eof) {
				if (fflush(stdout) != 0)
					break;
				memmove(buf, buf + pos, have - pos);
				have -= pos;
				pos = 0;
				if (have == cap) {
					char *nb = cap < (1u << 24) ? realloc(buf, cap * 2) : NULL;
					if (!nb) {
						status = cli_fail("<stdin>", "line %lu: line too long",
								  lineno + 1);
						break;
					}
					buf = nb;
					cap *= 2;
				}
				ssize_t n = read(0, buf + have, cap - have);
				if (n < 0 && errno == EINTR)
					continue;
				if (n < 0) {
					status = cli_fail("<stdin>", "read error: %s", strerror(errno));
					break;
				}
				if (n == 0)
					eof = true;
				have += (size_t)n;
				continue;
			}
			char *line = buf + pos;
			size_t len = nl ? (size_t)(nl - line) : have - pos;
			line[len] = '\0'; /* at EOF without a newline: have < cap here */
			lineno++;
			uint64_t addr = 0;
			if (!parse_address(line, &addr)) {
				cli_fail("<stdin>", "line %lu: not a hexadecimal address", lineno);
				status = EXIT_ERROR;
				addr = 0;
			}
			if (answer(&o, addr, NULL))
				status = EXIT_ERROR;
			pos += nl ? len + 1 : len;
		}
		free(buf);
	}
	symbolizer_free(sym);
	return cli_finish_stdout(status);
}
