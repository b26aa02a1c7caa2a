/* leaksnap hook: the control socket's command lines (control_proto.h). */
#include <string.h>

#include "control_proto.h"

/* The next space-separated word of @s[*pos..len): its start and length,
 * or false at the end. */
static bool next_word(const char *s, size_t len, size_t *pos, const char **w, size_t *wlen)
{
	size_t i = *pos;
	while (i < len && s[i] == ' ')
		i++;
	if (i == len)
		return false;
	size_t start = i;
	while (i < len && s[i] != ' ')
		i++;
	*w = s + start;
	*wlen = i - start;
	*pos = i;
	return true;
}

static bool word_is(const char *w, size_t wlen, const char *lit)
{
	size_t n = strlen(lit);
	return wlen == n && memcmp(w, lit, n) == 0;
}

enum ctl_cmd ctl_parse(const char *s, size_t len)
{
	const char *w[3];
	size_t wl[3], nw = 0, pos = 0;
	const char *x;
	size_t xl;
	while (next_word(s, len, &pos, &x, &xl)) {
		if (nw == 3)
			return CTL_UNKNOWN;
		w[nw] = x;
		wl[nw] = xl;
		nw++;
	}
	if (nw == 1) {
		if (word_is(w[0], wl[0], "version"))
			return CTL_VERSION;
		if (word_is(w[0], wl[0], "stats"))
			return CTL_STATS;
		if (word_is(w[0], wl[0], "dump"))
			return CTL_DUMP;
		if (word_is(w[0], wl[0], "quit"))
			return CTL_QUIT;
	} else if (nw == 2) {
		if (word_is(w[0], wl[0], "dump") && word_is(w[1], wl[1], "reachability"))
			return CTL_DUMP_REACH;
		if (word_is(w[0], wl[0], "capture") && word_is(w[1], wl[1], "on"))
			return CTL_CAPTURE_ON;
		if (word_is(w[0], wl[0], "capture") && word_is(w[1], wl[1], "off"))
			return CTL_CAPTURE_OFF;
	}
	return CTL_UNKNOWN;
}

size_t ctl_line_feed(struct ctl_line *l, const char *p, size_t n, enum ctl_cmd *cmd)
{
	*cmd = CTL_NONE;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c != '\n') {
			/* one byte past the limit is kept: it may be the '\r'
			 * that the newline drops */
			if (l->len < sizeof(l->text))
				l->text[l->len++] = c;
			else
				l->overlong = true;
			continue;
		}
		size_t len = l->len;
		if (len && l->text[len - 1] == '\r')
			len--;
		bool too_long = l->overlong || len > CTL_LINE_MAX;
		l->len = 0;
		l->overlong = false;
		if (too_long) {
			*cmd = CTL_TOO_LONG;
			return i + 1;
		}
		if (len == 0)
			continue; /* an empty line: no answer */
		*cmd = ctl_parse(l->text, len);
		return i + 1;
	}
	return n;
}

const char *ctl_error_answer(enum ctl_cmd cmd)
{
	switch (cmd) {
	case CTL_UNKNOWN:
		return "error unknown command\n";
	case CTL_TOO_LONG:
		return "error line too long\n";
	default:
		return NULL;
	}
}

bool ctl_peer_allowed(uid_t peer, const struct ctl_peer_ctx *ctx)
{
	if (peer == ctx->overflow_uid && !ctx->overflow_real)
		return false;
	if (peer == ctx->euid || peer == 0)
		return true;
	return ctx->bionic && ctx->dumpable && peer == CTL_AID_SHELL;
}

uint64_t ctl_dump_bound_ms(uint64_t bytes)
{
	uint64_t mib = bytes / (1u << 20) + (bytes % (1u << 20) != 0);
	return CTL_SEND_MS + mib * CTL_MS_PER_MIB;
}

enum ctl_verdict ctl_overdue(uint64_t now, uint64_t deadline, uint64_t until, bool ready)
{
	if (until && now >= until)
		return CTL_DROP;
	if (now < deadline)
		return CTL_KEEP;
	return ready ? CTL_RETRY : CTL_DROP;
}
