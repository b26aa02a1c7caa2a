/* leaksnap CLI: text bound for a terminal.
 *
 * Names in our output come from dumps, maps files and ELF symbol tables, so
 * a hostile file can carry escape sequences that retitle, recolour or
 * rewrite the user's terminal.  On a terminal, standard output therefore
 * goes through a filter that shows each byte a terminal could act on as
 * \xNN: C0 controls other than newline and tab, DEL, the C1 controls
 * U+0080..U+009F (in UTF-8, and as single bytes) and every byte that is not
 * part of well-formed UTF-8.  Other output (files, pipes) is written
 * unchanged.  Messages on standard error always go through the same rule,
 * newline and tab included, so that a message stays one line. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kit_format.h"

/* How many bytes at @s (of @n) form one character that is safe to show as
 * it is; 0 when s[0] must be escaped; -1 when @s is a proper prefix of a
 * character that needs more than @n bytes to decide (format.h's rule, and
 * newline and tab where @newlines allows them). */
static int safe_char(const unsigned char *s, size_t n, bool newlines)
{
	if (newlines && (s[0] == '\n' || s[0] == '\t'))
		return 1;
	return kit_text_char(s, n);
}

size_t cli_escape(struct cli_escaper *e, const char *buf, size_t n, bool final, char *out)
{
	/* the pending bytes of an unfinished character, then @buf */
	unsigned char work[CLI_ESCAPE_CHUNK + 4];
	size_t w = e->npend, o = 0;
	memcpy(work, e->pend, w);
	memcpy(work + w, buf, n);
	w += n;
	e->npend = 0;
	for (size_t i = 0; i < w;) {
		int k = safe_char(work + i, w - i, e->newlines);
		if (k < 0 && !final) {
			e->npend = w - i;
			memcpy(e->pend, work + i, e->npend);
			break;
		}
		if (k > 0) {
			memcpy(out + o, work + i, (size_t)k);
			o += (size_t)k;
			i += (size_t)k;
			continue;
		}
		o += (size_t)sprintf(out + o, "\\x%02x", work[i]);
		i++;
	}
	return o;
}

void cli_put_escaped(FILE *f, const char *s, bool newlines)
{
	struct cli_escaper e = {.newlines = newlines};
	char out[CLI_ESCAPE_OUT];
	size_t n = strlen(s);
	do {
		size_t k = n < CLI_ESCAPE_CHUNK ? n : CLI_ESCAPE_CHUNK;
		n -= k;
		fwrite(out, 1, cli_escape(&e, s, k, n == 0, out), f);
		s += k;
	} while (n > 0);
}

/* The terminal filter: a stdio cookie stream over file descriptor 1. */
static struct cli_escaper tty_state = {.newlines = true};

static int write_all(const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(STDOUT_FILENO, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static ssize_t tty_write(void *cookie, const char *buf, size_t size)
{
	(void)cookie;
	char out[CLI_ESCAPE_OUT];
	for (size_t done = 0; done < size;) {
		size_t k = size - done < CLI_ESCAPE_CHUNK ? size - done : CLI_ESCAPE_CHUNK;
		if (write_all(out, cli_escape(&tty_state, buf + done, k, false, out)) != 0)
			return done ? (ssize_t)done : -1;
		done += k;
	}
	return (ssize_t)size;
}

static int tty_close(void *cookie)
{
	(void)cookie;
	char out[CLI_ESCAPE_OUT];
	return write_all(out, cli_escape(&tty_state, "", 0, true, out));
}

void cli_guard_terminal(void)
{
	if (!isatty(STDOUT_FILENO))
		return;
	cookie_io_functions_t io = {.write = tty_write, .close = tty_close};
	FILE *f = fopencookie(NULL, "w", io);
	if (!f)
		return; /* out of memory this early: stay unfiltered rather than fail */
	fflush(stdout);
	/* glibc documents stdout as an ordinary variable one may assign */
	stdout = f;
}
