/* Fuzz the control socket's command lines (hook/control_proto.c), which
 * read what any local client sends.  The input is byte 0 (the size of the
 * pieces the bytes arrive in, 1..256) then the bytes.  The commands found
 * must be the same in any pieces, each call must take at least one byte
 * and stop right after a line's newline, the state never holds more than
 * its buffer, and the commands are those of a plain model: the input split
 * at each '\n', a '\r' before it dropped, empty lines skipped, lines past
 * CTL_LINE_MAX too long, the others as ctl_parse reads them. */
#include <stdlib.h>
#include <string.h>

#include "control_proto.h"
#include "fuzz.h"

/* The commands of @data fed in pieces of @step; -1 when more than @max. */
static long feed(const uint8_t *data, size_t size, size_t step, enum ctl_cmd *out, size_t max)
{
	struct ctl_line l = CTL_LINE_INIT;
	size_t n = 0;
	for (size_t at = 0; at < size;) {
		size_t piece = size - at < step ? size - at : step;
		while (piece) {
			enum ctl_cmd cmd;
			size_t k = ctl_line_feed(&l, (const char *)data + at, piece, &cmd);
			FUZZ_CHECK(k >= 1 && k <= piece);
			FUZZ_CHECK(l.len <= sizeof(l.text));
			if (cmd == CTL_NONE) {
				FUZZ_CHECK(k == piece);
			} else {
				FUZZ_CHECK(data[at + k - 1] == '\n');
				FUZZ_CHECK(l.len == 0 && !l.overlong);
				if (n == max)
					return -1;
				out[n++] = cmd;
			}
			at += k;
			piece -= k;
		}
	}
	return (long)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t step = (size_t)data[0] + 1;
	data++;
	size--;
	size_t max = size + 1;
	enum ctl_cmd *a = malloc(max * sizeof(*a)), *b = malloc(max * sizeof(*b)),
		     *m = malloc(max * sizeof(*m));
	if (!a || !b || !m) {
		free(a);
		free(b);
		free(m);
		return 0;
	}
	long na = feed(data, size, step, a, max);
	long nb = feed(data, size, size ? size : 1, b, max);
	FUZZ_CHECK(na >= 0 && na == nb);
	FUZZ_CHECK(memcmp(a, b, (size_t)na * sizeof(*a)) == 0);

	/* the model */
	size_t nm = 0, start = 0;
	for (size_t i = 0; i < size; i++) {
		if (data[i] != '\n')
			continue;
		size_t len = i - start;
		if (len && data[i - 1] == '\r')
			len--;
		if (len > CTL_LINE_MAX)
			m[nm++] = CTL_TOO_LONG;
		else if (len)
			m[nm++] = ctl_parse((const char *)data + start, len);
		start = i + 1;
	}
	FUZZ_CHECK((long)nm == na);
	FUZZ_CHECK(memcmp(a, m, nm * sizeof(*a)) == 0);
	for (size_t i = 0; i < nm; i++) {
		FUZZ_CHECK(a[i] > CTL_NONE && a[i] <= CTL_TOO_LONG);
		FUZZ_CHECK((ctl_error_answer(a[i]) != NULL) ==
			   (a[i] == CTL_UNKNOWN || a[i] == CTL_TOO_LONG));
	}
	free(a);
	free(b);
	free(m);
	return 0;
}
