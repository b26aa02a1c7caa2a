/* leaksnap ctl: one command to a running process over its control socket
 * (control/, docs/control.md): its version, its live counts, a dump
 * streamed into a file that never replaces one, capture on or off. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"
#include "kit_publish.h"

static const char ctl_usage[] =
	"Usage: leaksnap ctl PID|SOCKET version\n"
	"       leaksnap ctl PID|SOCKET stats [--json]\n"
	"       leaksnap ctl PID|SOCKET dump -o FILE [--reachability]\n"
	"       leaksnap ctl PID|SOCKET capture on|off\n\n"
	"Send one command to a process running with the hook's control socket\n"
	"(started with LEAKSNAP_CONTROL=1: the abstract socket leaksnap.PID; or\n"
	"LEAKSNAP_CONTROL=PATH: give that PATH as SOCKET) and print its answer.\n"
	"An argument of digits only is a PID, anything else a socket path.\n\n"
	"Commands:\n"
	"  version      the hook's version and the process's pid\n"
	"  stats        live bytes, live blocks, records (distinct size and stack),\n"
	"               capture on or off, dumps written, invalid frees: one\n"
	"               'key: value' a line (a sampled process's bytes and blocks\n"
	"               are estimates, marked with '≈', the sampled counts beside)\n"
	"  dump         a LEAKSNAP dump of the process now (its maps embedded), taken\n"
	"               as a file dump is, streamed into FILE: written under a\n"
	"               temporary name, checked with the snapshot reader, then\n"
	"               named FILE, which must not exist (never overwritten); Ctrl-C\n"
	"               removes the temporary file\n"
	"  capture      turn recording of new allocations on or off (frees of\n"
	"               blocks recorded before are still honoured)\n\n"
	"Options:\n"
	"  --json               stats: the process's JSON object, one line\n"
	"  -o, --output FILE    dump: the file to write (required)\n"
	"  --reachability       dump: classify every live block as reachable or not\n"
	"  -h, --help           this help\n\n"
	"The socket's holder is checked before a byte is sent: the process PID\n"
	"itself, of our user or root.\n\n"
	"Exit status: 0 success; 2 any error, one line 'leaksnap: PID|SOCKET: ...':\n"
	"no such process, no control socket, the socket held by another process or\n"
	"user, refused (the process belongs to another user), connection closed\n"
	"early, a malformed answer, an error from the process.\n";

struct ctl_args {
	bool json, reachability;
	const char *output;
	int seen_json, seen_output, seen_reach;
};

enum { O_JSON = 0x200, O_REACH };

/* The options, wherever they are: 0, CLI_HELP_SHOWN or -1 (said).  The
 * operands are left in argv[optind..). */
static int parse_options(int argc, char **argv, struct ctl_args *a)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, O_JSON},
		{"output", required_argument, NULL, 'o'},
		{"reachability", no_argument, NULL, O_REACH},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case O_JSON: a->json = true; a->seen_json = 1; break;
		case O_REACH: a->reachability = true; a->seen_reach = 1; break;
		case 'o': a->output = optarg; a->seen_output = 1; break;
		case 'h':
			fputs(ctl_usage, stdout);
			return cli_finish_stdout(EXIT_OK) == EXIT_OK ? CLI_HELP_SHOWN : -1;
		default:
			return cli_bad_option("ctl", argv, c == ':' ? ':' : optopt);
		}
	}
	return 0;
}

static int do_version(struct control_conn *c)
{
	struct leaksnap_error err;
	struct control_version v;
	if (control_version(c, &v, &err))
		return ctl_fail(&err);
	/* the word is the process's: shown escaped, as its other answers */
	char word[4 * sizeof(v.version) + 8];
	control_escape(v.version, strlen(v.version), sizeof(v.version), word, sizeof(word));
	printf("leaksnap %s, pid %lld, control protocol " CONTROL_PROTOCOL "\n", word,
	       (long long)v.pid);
	return 0;
}

static int do_stats(struct control_conn *c, bool json)
{
	struct leaksnap_error err;
	struct control_stats s;
	char line[CONTROL_LINE_MAX];
	if (control_stats(c, &s, line, sizeof(line), &err))
		return ctl_fail(&err);
	if (json) {
		/* the object as received, written again by Jansson (checked,
		 * keys in the process's order, ASCII only: a string of the
		 * process's never puts raw bytes on a terminal) */
		json_t *o = json_loads(line, 0, NULL);
		char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER |
						       JSON_ENSURE_ASCII)
			       : NULL;
		json_decref(o);
		if (!text)
			return cli_fail(control_subject(c), "out of memory");
		printf("%s\n", text);
		free(text);
		return 0;
	}
	if (s.sample_interval) {
		/* sampled: the estimates, marked, the sampled counts beside
		 * them (as show gives them); double frees not looked for */
		const char *e = cli_approx();
		printf("pid: %lld\nlive_bytes: %s%llu (%llu sampled)\n"
		       "live_blocks: %s%llu (%llu sampled)\nrecords: %llu\ncapture: %s\n"
		       "dumps_written: %llu\nsample_interval: %llu\n",
		       (long long)s.pid, e, (unsigned long long)s.estimated_live_bytes,
		       (unsigned long long)s.live_bytes, e,
		       (unsigned long long)s.estimated_live_blocks,
		       (unsigned long long)s.live_blocks, (unsigned long long)s.records,
		       s.capture ? "on" : "off", (unsigned long long)s.dumps_written,
		       (unsigned long long)s.sample_interval);
		if (s.has_invalid_frees)
			printf("invalid_frees: %llu\n", (unsigned long long)s.invalid_frees);
		else
			printf("invalid_frees: not looked for (sampled)\n");
		return 0;
	}
	printf("pid: %lld\nlive_bytes: %llu\nlive_blocks: %llu\nrecords: %llu\ncapture: %s\n"
	       "dumps_written: %llu\ninvalid_frees: %llu\n",
	       (long long)s.pid, (unsigned long long)s.live_bytes,
	       (unsigned long long)s.live_blocks, (unsigned long long)s.records,
	       s.capture ? "on" : "off", (unsigned long long)s.dumps_written,
	       (unsigned long long)s.invalid_frees);
	return 0;
}

static int do_dump(struct control_conn *c, const char *path, bool reachability)
{
	struct leaksnap_error err;
	char *tmp;
	struct leaksnap_snapshot *s;
	/* Ctrl-C: the temporary is removed, and ctl ends at once */
	struct sigaction old;
	ctl_sigint_catch(-1, &old);
	int r = ctl_dump_receive(c, path, reachability, &tmp, &s, &err);
	if (r) {
		ctl_sigint_restore(&old);
		return ctl_fail(&err);
	}
	r = kit_publish_noreplace(tmp, path);
	if (r == 0)
		unlink(tmp);
	if (r < 0)
		unlink(tmp);
	ctl_dump_settled();
	ctl_sigint_restore(&old);
	if (r < 0) {
		if (r == -EEXIST)
			cli_fail(path, KIT_NEVER_OVERWRITES);
		else
			cli_fail(path, "%s", strerror(-r));
	} else {
		char totals[160];
		cli_dump_totals(s, totals, sizeof(totals));
		printf("wrote %s: %s\n", path, totals);
	}
	free(tmp);
	leaksnap_snapshot_close(s);
	return r < 0 ? -1 : 0;
}

static int do_capture(struct control_conn *c, bool on)
{
	struct leaksnap_error err;
	if (control_capture(c, on, &err))
		return ctl_fail(&err);
	printf("capture %s\n", on ? "on" : "off");
	return 0;
}

/* The command's operands and options agree: 0, or -1 (said). */
static int check(const struct ctl_args *a, int nops, char **ops)
{
	if (nops < 1)
		return cli_usage_error("ctl", "missing PID or SOCKET");
	if (nops < 2)
		return cli_usage_error("ctl", "missing command: version, stats, dump or capture");
	const char *cmd = ops[1];
	int want = strcmp(cmd, "capture") == 0 ? 3 : 2;
	if (strcmp(cmd, "version") && strcmp(cmd, "stats") && strcmp(cmd, "dump") &&
	    strcmp(cmd, "capture"))
		return cli_usage_error("ctl", "unknown command '%s' (version, stats, dump or "
					      "capture)", cmd);
	if (want == 3 && (nops < 3 || (strcmp(ops[2], "on") && strcmp(ops[2], "off"))))
		return cli_usage_error("ctl", "capture: 'on' or 'off' expected");
	if (nops > want)
		return cli_usage_error("ctl", "%s: unexpected operand '%s'", cmd, ops[want]);
	if (a->seen_json && strcmp(cmd, "stats"))
		return cli_usage_error("ctl", "option '--json' is not for '%s'", cmd);
	if (a->seen_output && strcmp(cmd, "dump"))
		return cli_usage_error("ctl", "option '--output' is not for '%s'", cmd);
	if (a->seen_reach && strcmp(cmd, "dump"))
		return cli_usage_error("ctl", "option '--reachability' is not for '%s'", cmd);
	if (strcmp(cmd, "dump") == 0 && !a->output)
		return cli_usage_error("ctl", "dump: -o FILE is required");
	if (a->output && (a->output[0] == '\0' || strcmp(a->output, "-") == 0))
		return cli_usage_error("ctl", "dump: -o must name a file");
	if (ops[0][0] == '\0')
		return cli_usage_error("ctl", "empty PID or SOCKET");
	return 0;
}

int cmd_ctl(int argc, char **argv)
{
	struct ctl_args a = {0};
	int r = parse_options(argc, argv, &a);
	if (r)
		return r == CLI_HELP_SHOWN ? EXIT_OK : EXIT_ERROR;
	char **ops = argv + optind;
	int nops = argc - optind;
	if (check(&a, nops, ops))
		return EXIT_ERROR;
	const char *cmd = ops[1];
	/* nothing is asked of the process when the file cannot be written */
	if (a.output && cli_outfile_check(a.output, CLI_REPLACE_NONE))
		return EXIT_ERROR;
	struct leaksnap_error err;
	struct control_conn *c;
	if (control_open(ops[0], NULL, &c, &err)) {
		ctl_fail(&err);
		return EXIT_ERROR;
	}
	if (strcmp(cmd, "version") == 0)
		r = do_version(c);
	else if (strcmp(cmd, "stats") == 0)
		r = do_stats(c, a.json);
	else if (strcmp(cmd, "dump") == 0)
		r = do_dump(c, a.output, a.reachability);
	else
		r = do_capture(c, strcmp(ops[2], "on") == 0);
	control_close(c);
	return cli_finish_stdout(r ? EXIT_ERROR : EXIT_OK);
}
