/* Replay driver: runs a harness's LLVMFuzzerTestOneInput on files, as a
 * plain program (no fuzzing), so that gcc builds -- the normal one and the
 * SANITIZE=1 one -- run the committed corpora in `make check`.
 *   replay_<name> FILE|DIR...   (a directory: each file in it, sorted)
 * Prints "<n> inputs" and exits 0; a finding aborts, as under libFuzzer. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static unsigned long ninputs;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);
	for (;;) {
		if (buf == NULL) {
			fprintf(stderr, "replay: %s: out of memory\n", path);
			fclose(f);
			return -1;
		}
		len += fread(buf + len, 1, cap - len, f);
		if (len < cap)
			break;
		uint8_t *nb = realloc(buf, cap * 2);
		if (nb == NULL)
			free(buf);
		buf = nb;
		cap *= 2;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(buf);
		return -1;
	}
	/* An exact-size copy, so that ASan sees a read past the input's end. */
	uint8_t *in = malloc(len ? len : 1);
	if (in == NULL) {
		free(buf);
		return -1;
	}
	memcpy(in, buf, len);
	free(buf);
	if (getenv("REPLAY_VERBOSE"))
		fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(in, len);
	free(in);
	ninputs++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *path)
{
	DIR *d = opendir(path);
	if (d == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof(*nn));
			if (nn == NULL) {
				rc = -1;
				break;
			}
			names = nn;
		}
		size_t l = strlen(path) + strlen(e->d_name) + 2;
		if ((names[n] = malloc(l)) == NULL) {
			rc = -1;
			break;
		}
		snprintf(names[n++], l, "%s/%s", path, e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		if (rc == 0 && run_file(names[i]))
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if ((S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i])) != 0)
			return 1;
	}
	printf("%lu inputs\n", ninputs);
	return 0;
}
