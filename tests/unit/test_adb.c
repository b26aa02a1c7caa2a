/* Unit tests for adb/adb_run.c, below `leaksnap adb`: package names,
 * quoting of device shell commands (checked by a real sh parsing them
 * back), adb's messages reduced to one line, wrap property names, and
 * running a program (kit_run) with bounded output, exit statuses and time
 * limits. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adb.h"
#include "kit_run.h"

/* The driver's messages, kept here so that each can be checked (the CLI
 * prints "leaksnap: SUBJECT: ..."). */
static char said[1024];

static void keep_error(const char *subject, const char *text)
{
	snprintf(said, sizeof(said), "%s: %s", subject, text);
}

static const struct adb_output test_output = {.error = keep_error};

static int setup(void **state)
{
	(void)state;
	adb_set_output(&test_output);
	return 0;
}

static void test_package_names(void **state)
{
	(void)state;
	const char *good[] = {"com.acme.app", "a.b", "A_b.c1", "_x._y",
			      "com.example.averylongapplicationname"};
	const char *bad[] = {"",	   "acme",  ".a.b",  "a..b",  "a.b.",  "1a.b",	"a.1b",
			     "a.b;reboot", "a.b c", "a.b'c", "a.b-c", "a.b/c", "a.b\n", "a.b$(id)"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(adb_package_valid(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(adb_package_valid(bad[i]));
	char longname[300];
	memset(longname, 'a', sizeof(longname));
	longname[1] = '.';
	longname[255] = '\0';
	assert_true(adb_package_valid(longname));
	longname[255] = 'a';
	longname[256] = '\0';
	assert_false(adb_package_valid(longname));
}

static void test_quoting_exact(void **state)
{
	(void)state;
	const char *args[] = {"setprop", "wrap.a.b", "X=1 logwrapper", "it's", "", NULL};
	char *s = adb_cmd(NULL, args);
	assert_string_equal(s, "'setprop' 'wrap.a.b' 'X=1 logwrapper' 'it'\\''s' ''");
	free(s);
	const char *one[] = {"id", NULL};
	s = adb_cmd("run-as a.b", one);
	assert_string_equal(s, "run-as a.b 'id'");
	free(s);
}

/* sh parses the command back into exactly the words given. */
static void test_quoting_round_trip(void **state)
{
	(void)state;
	const char *args[] = {"printf", "%s|",	"a'b",	     "$(touch /tmp/nope)",
			      "`id`",	"x\\y", "two words", "new\nline",
			      "*",	";rm",	"''",	     "\"q\"",
			      NULL};
	char *cmd = adb_cmd(NULL, args);
	assert_non_null(cmd);
	char path[] = "/tmp/leaksnap-test-adb.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
	close(fd);
	char line[512];
	snprintf(line, sizeof(line), "sh %s", path);
	FILE *p = popen(line, "r");
	assert_non_null(p);
	char out[512] = "";
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	unlink(path);
	assert_string_equal(out,
			    "a'b|$(touch /tmp/nope)|`id`|x\\y|two words|new\nline|*|;rm|''|\"q\"|");
	free(cmd);
}

static void test_first_line(void **state)
{
	(void)state;
	assert_string_equal(adb_first_line("* daemon not running; starting now at tcp:5037\n"
					   "* daemon started successfully\nadb: device offline\n"),
			    "device offline");
	assert_string_equal(adb_first_line("error: device unauthorized.\nThis adb server's"),
			    "device unauthorized.");
	assert_string_equal(adb_first_line("adb: error: failed to stat remote object 'x': "
					   "Permission denied\n"),
			    "failed to stat remote object 'x': Permission denied");
	assert_string_equal(adb_first_line("\n\n  run-as: package not debuggable: a.b  \r\n"),
			    "run-as: package not debuggable: a.b");
	assert_string_equal(adb_first_line(""), "");
	assert_string_equal(adb_first_line(NULL), "");
	assert_string_equal(adb_first_line("\n \r\n"), "");
}

static void test_wrap_prop(void **state)
{
	(void)state;
	struct adb a = {.sdk = 34};
	char buf[300];
	adb_wrap_prop(&a, "com.example.averylongapplicationname", buf, sizeof(buf));
	assert_string_equal(buf, "wrap.com.example.averylongapplicationname");
	a.sdk = 25;
	adb_wrap_prop(&a, "com.example.averylongapplicationname", buf, sizeof(buf));
	assert_string_equal(buf, "wrap.com.example.averylongappli");
	assert_int_equal(strlen(buf), 31);
	adb_wrap_prop(&a, "com.acme.app", buf, sizeof(buf));
	assert_string_equal(buf, "wrap.com.acme.app");
}

/* adb_run with /bin/sh as "adb" (no serial: its arguments as given). */
static struct adb sh = {.prog = "sh"};

static void test_run_status_and_output(void **state)
{
	(void)state;
	struct adb_result r;
	const char *ok[] = {"-c", "printf 'out\\n'; printf 'err\\n' >&2", NULL};
	assert_int_equal(adb_run(&sh, ok, -1, ADB_SMALL, 10, false, &r), 0);
	assert_string_equal(r.out, "out\n");
	assert_string_equal(r.err, "err\n");
	assert_int_equal(r.status, 0);
	adb_result_free(&r);
	const char *bad[] = {"-c", "echo adb: device offline >&2; exit 3", NULL};
	assert_int_equal(adb_run(&sh, bad, -1, ADB_SMALL, 10, true, &r), 0);
	assert_int_equal(r.status, 3);
	adb_result_free(&r);
	assert_int_equal(adb_run(&sh, bad, -1, ADB_SMALL, 10, false, &r), -1);
	assert_string_equal(said, "adb: device offline");
	adb_result_free(&r);
	const char *sig[] = {"-c", "kill -9 $$", NULL};
	assert_int_equal(adb_run(&sh, sig, -1, ADB_SMALL, 10, true, &r), 0);
	assert_int_equal(r.status, 128 + 9);
	adb_result_free(&r);
	assert_int_equal(adb_run(&sh, sig, -1, ADB_SMALL, 10, false, &r), -1);
	assert_string_equal(said, "adb: 'sh -c' was killed by signal 9");
	adb_result_free(&r);
	const char *mute[] = {"-c", "exit 4", NULL};
	assert_int_equal(adb_run(&sh, mute, -1, ADB_SMALL, 10, false, &r), -1);
	assert_string_equal(said, "adb: 'sh -c' exited with status 4");
	adb_result_free(&r);
	/* silent: the failure is returned, nothing is said */
	struct adb quiet = sh;
	quiet.silent = true;
	said[0] = '\0';
	assert_int_equal(adb_run(&quiet, mute, -1, ADB_SMALL, 10, false, &r), -1);
	assert_string_equal(said, "");
	adb_result_free(&r);
}

static void test_run_bounds(void **state)
{
	(void)state;
	struct adb_result r;
	/* more than the bound: an error, and memory stays at the bound */
	const char *big[] = {"-c", "head -c 3000000 /dev/zero", NULL};
	assert_int_equal(adb_run(&sh, big, -1, ADB_SMALL, 10, false, &r), -1);
	assert_string_equal(said, "adb: 'sh -c' printed more than 1 MiB");
	assert_true(r.truncated);
	assert_int_equal(r.out_len, ADB_SMALL);
	adb_result_free(&r);
	/* a time limit */
	double t0 = kit_now();
	const char *slow[] = {"-c", "sleep 5", NULL};
	assert_int_equal(adb_run(&sh, slow, -1, ADB_SMALL, 0.3, false, &r), -1);
	assert_string_equal(said, "adb: 'sh -c' timed out after 0.3 s");
	assert_true(kit_now() - t0 < 3);
	adb_result_free(&r);
	/* a process left behind holding the pipes does not hold adb_run */
	t0 = kit_now();
	const char *bg[] = {"-c", "sleep 3 & echo done", NULL};
	assert_int_equal(adb_run(&sh, bg, -1, ADB_SMALL, 10, false, &r), 0);
	assert_string_equal(r.out, "done\n");
	assert_true(kit_now() - t0 < 2);
	adb_result_free(&r);
}

static void test_run_to_fd_and_missing(void **state)
{
	(void)state;
	struct adb_result r;
	FILE *f = tmpfile();
	assert_non_null(f);
	const char *bin[] = {"-c", "printf 'a\\000b\\n'", NULL};
	assert_int_equal(adb_run(&sh, bin, fileno(f), ADB_SMALL, 10, false, &r), 0);
	assert_int_equal(r.out_len, 0);
	adb_result_free(&r);
	char buf[8];
	rewind(f);
	assert_int_equal(fread(buf, 1, sizeof(buf), f), 4);
	assert_memory_equal(buf, "a\0b\n", 4);
	fclose(f);
	struct adb none = {.prog = "/nonexistent/adb"};
	const char *args[] = {"devices", NULL};
	assert_int_equal(adb_run(&none, args, -1, ADB_SMALL, 10, false, &r), -1);
	assert_string_equal(said, "adb: cannot run '/nonexistent/adb': No such file or directory "
				  "(set $ADB or put adb on PATH)");
	adb_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_package_names),
		cmocka_unit_test(test_quoting_exact),
		cmocka_unit_test(test_quoting_round_trip),
		cmocka_unit_test(test_first_line),
		cmocka_unit_test(test_wrap_prop),
		cmocka_unit_test(test_run_status_and_output),
		cmocka_unit_test(test_run_bounds),
		cmocka_unit_test(test_run_to_fd_and_missing),
	};
	return cmocka_run_group_tests_name("adb", tests, setup, NULL);
}
