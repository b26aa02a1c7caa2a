/* leaksnap adb: driving a device through the adb program (docs/adb.md).
 *
 * adb runs as a child process with an argument vector (never through a
 * host shell, kit_run.h), its output captured up to a bound and its run
 * limited in time.  Commands for the device's shell are built by
 * adb_cmd(), which quotes every argument, from strings checked first
 * (package names by adb_package_valid(), paths we make ourselves).
 *
 * The driver prints nothing itself: it speaks through the struct
 * adb_output its tool gives adb_set_output() before any other call.  Every
 * failure is said once through it (as "adb: <what adb said or what is
 * wrong>" for the device's) and the function returns -1. */
#ifndef LEAKSNAP_ADB_H
#define LEAKSNAP_ADB_H

#include <stdbool.h>
#include <stddef.h>

struct leaksnap_snapshot;
struct leaksnap_maps;

/* How the driver speaks and what it needs from its tool. */
struct adb_output {
	/* An error about @subject ("adb" for the device's), said once. */
	void (*error)(const char *subject, const char *text);
	void (*warning)(const char *subject, const char *text);
	/* A line of progress for the user (standard error). */
	void (*progress)(const char *text);
	/* A line of the result (standard output), without its newline. */
	void (*result)(const char *text);
	/* In the child of every adb run, before exec (may be NULL). */
	void (*child_setup)(void);
	/* The tool's files: a maps file read (0, or -1 said); a dump opened
	 * with its maps (0 with *@maps NULL when it has none, or -1 said). */
	int (*read_maps)(const char *path, char **text, size_t *len);
	int (*open_dump)(const char *path, struct leaksnap_snapshot **snap,
			 struct leaksnap_maps **maps);
};
void adb_set_output(const struct adb_output *out);
/* The tool's output (adb_set_output), for the driver's files. */
const struct adb_output *adb_out(void);

/* The device, once adb_connect() found it. */
struct adb {
	const char *prog;   /* $ADB, else "adb" (looked up on PATH) */
	char serial[256];   /* the device every command goes to (-s) */
	int sdk;            /* ro.build.version.sdk; 0: unknown */
	bool root;          /* the device's shell runs as root (adb root) */
	double timeout;     /* seconds a dump may take ($LEAKSNAP_ADB_TIMEOUT, 60) */
	bool silent;        /* adb_run says nothing (cleanup after a failure) */
};

/* What one adb run gave.  out/err are NUL-terminated (never NULL after a
 * run); each holds at most the bound asked, truncated says more came. */
struct adb_result {
	int status;         /* exit status; 128+N when killed by signal N */
	char *out, *err;
	size_t out_len, err_len;
	bool truncated;
};
void adb_result_free(struct adb_result *r);

/* Output bounds. */
#define ADB_SMALL ((size_t)1 << 20)  /* properties, pids, listings */
#define ADB_LARGE ((size_t)64 << 20) /* maps, environ */

/* Run ADB [-s SERIAL] ARGS... (@args NULL-terminated).  With @out_fd >= 0
 * stdout goes there instead of being captured.  Returns 0 when adb ran
 * and exited 0, else -1 after saying why (adb not found, timed out after
 * @timeout seconds, killed, or its first line of complaint).
 * @quiet_status: an exit status other than 0 is not said nor an error
 * (the caller looks at r->status). */
int adb_run(const struct adb *a, const char *const *args, int out_fd, size_t max_out,
	    double timeout, bool quiet_status, struct adb_result *r);
/* "adb shell CMD": as adb_run. */
int adb_shell(const struct adb *a, const char *cmd, size_t max_out, double timeout,
	      bool quiet_status, struct adb_result *r);

/* Find the device: "adb devices", then the one named by @serial (-s),
 * else $ANDROID_SERIAL, else the only one attached; then its SDK level
 * and whether its shell is root.  A serial already in @a->serial counts as
 * @serial.  0, or -1 (said). */
int adb_connect(struct adb *a, const char *serial);

/* A device shell command: each of @args (NULL-terminated) single-quoted,
 * joined by spaces; words in @prefix (a fixed string of ours, may be
 * NULL or "") go first as they are.  NULL when out of memory. */
char *adb_cmd(const char *prefix, const char *const *args);

/* A Java package name as Android accepts one: two or more segments of
 * [A-Za-z_][A-Za-z0-9_]*, joined by '.', at most 255 bytes. */
bool adb_package_valid(const char *s);

/* The first line of @text with a message in it (stripped of "adb: " and
 * "error: " prefixes), or "" (points into a static buffer). */
const char *adb_first_line(const char *text);

/* The driver's messages through adb_output: an error about the device
 * (subject "adb"), one about @subject (a local file); both return -1. */
int adb_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int adb_fail_at(const char *subject, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void adb_warn(const char *subject, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void adb_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void adb_result_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The actions (adb_wrap.c, adb_snapshot.c, adb_symbols.c), each 0 or -1
 * (said).  The result lines go to adb_output's result().
 *
 * enable: the app's wrap property set for malloc_debug's backtrace option
 * (@hook_lib NULL) or for the hook @hook_lib (pushed), the app restarted
 * and checked; disable: the property cleared, the pushed hook removed,
 * the app restarted and checked. */
struct adb_enable_opts {
	const char *package;
	const char *hook_lib; /* a local ELF file, or NULL: malloc_debug */
	unsigned frames;
	bool frames_set;
	bool control; /* the hook serves its control socket (LEAKSNAP_CONTROL=1) */
};
int adb_enable(struct adb *a, const struct adb_enable_opts *o);
int adb_disable(struct adb *a, const char *package);

/* snapshot: @o->count snapshots of the running app, pulled into
 * @o->out_dir (an existing directory), their names as result lines.
 * @socket: streamed from the hook's control socket (adb forward tcp:0
 * localabstract:leaksnap.PID, then forward --remove, also on failure)
 * instead of written on the device and pulled. */
struct adb_snapshot_opts {
	const char *package; /* or NULL with pid */
	long pid;
	unsigned count;
	double interval;
	const char *out_dir;
	bool socket;
};
int adb_snapshot(struct adb *a, const struct adb_snapshot_opts *o);

struct adb_symbols_opts {
	char *const *dumps;
	size_t dump_count;
	const char *out_dir;
	const char *const *symbol_dirs;
	size_t symbol_dir_count;
};
/* symbols: needs no device when every module is already there; @a is
 * connected on first use.  -1 also when a module failed (said). */
int adb_symbols(struct adb *a, const char *serial, const struct adb_symbols_opts *o);

/* The app's wrap property name on this device (names were at most 31
 * bytes before Android 8.0: the zygote looks the package name up cut to
 * that length, and so do we). */
void adb_wrap_prop(const struct adb *a, const char *package, char *buf, size_t size);

/* Device commands the actions share (adb_run.c).  The first pid of
 * @package (0: not running), or -1 (said). */
int adb_pidof(const struct adb *a, const char *package, long *pid);
/* Read a device file the app owns: through run-as @package unless the
 * shell is root or @package is NULL.  The content in r->out. */
int adb_cat(const struct adb *a, const char *package, const char *path, size_t max,
	    struct adb_result *r);

#endif
