/* leaksnap kit: function names shortened for reading (kit_names.h). */
#include <stdbool.h>
#include <string.h>

#include "kit_names.h"

struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len < o->size) {
		size_t room = o->size - o->len;
		memcpy(o->buf + o->len, s, n < room ? n : room);
	}
	o->len += n;
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || (unsigned char)c >= 0x80;
}

static bool starts(const char *p, const char *end, const char *word)
{
	size_t n = strlen(word);
	return (size_t)(end - p) >= n && memcmp(p, word, n) == 0;
}

/* The operators' spellings, longest first where one begins another. */
static const char *const operator_symbols[] = {
	"<<=", ">>=", "<=>", "->*", "()", "[]", "\"\"", "<<", ">>", "<=", ">=", "->", "==", "!=",
	"&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<", ">", "+",
	"-", "*", "/", "%", "&", "|", "^", "~", "!", "=", ",",
};

/* At @p, (after the word "operator"): the length of the operator's
 * symbol, or of " new", " delete" (with "[]"), or 0 (a conversion: a type
 * follows). */
static size_t operator_len(const char *p, const char *end)
{
	for (size_t i = 0; i < sizeof(operator_symbols) / sizeof(operator_symbols[0]); i++)
		if (starts(p, end, operator_symbols[i]))
			return strlen(operator_symbols[i]);
	static const char *const words[] = {" new[]", " delete[]", " new", " delete"};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (starts(p, end, words[i]) &&
		    (p + strlen(words[i]) == end || !ident_char(p[strlen(words[i])])))
			return strlen(words[i]);
	return 0;
}

/* Whether the word "operator" starts at @p (@begin: where the name
 * starts) and, when so, the end of the operator's name in *@after. */
static bool operator_at(const char *begin, const char *p, const char *end, const char **after)
{
	if (!starts(p, end, "operator") || (p > begin && ident_char(p[-1])))
		return false;
	const char *q = p + 8;
	if (q < end && ident_char(*q))
		return false; /* "operators", "operator_x" */
	*after = q + operator_len(q, end);
	return true;
}

/* The bracket that closes the one at @p ('(', '[', '{' or '<'), before
 * @end; NULL when none does.  Inside parentheses and square brackets '<'
 * and '>' are not brackets (comparisons, "->"); inside angle brackets an
 * operator's name ("operator<") is skipped. */
static const char *closing(const char *begin, const char *p, const char *end)
{
	char stack[256];
	size_t depth = 0;
	for (; p < end; p++) {
		const char *after;
		char c = *p, top = depth ? stack[depth - 1] : 0;
		if (top == '<' && operator_at(begin, p, end, &after)) {
			p = after - 1;
			continue;
		}
		if (c == '-' && p + 1 < end && p[1] == '>') {
			p++;
			continue;
		}
		if (c == '(' || c == '[' || c == '{' || (c == '<' && top != '(' && top != '[')) {
			if (depth == sizeof(stack))
				return NULL;
			stack[depth++] = c;
			continue;
		}
		char open = c == ')' ? '(' : c == ']' ? '[' : c == '}' ? '{' : c == '>' ? '<' : 0;
		if (!open || (c == '>' && top != '<'))
			continue;
		if (top != open)
			return NULL;
		if (--depth == 0)
			return p;
	}
	return NULL;
}

/* Whether the parentheses around [@p, @end) group a declarator rather than
 * hold parameters: the name of a function that returns a pointer to a
 * function ("void (*std::signal(int, void (*)(int)))(int)") or to a member
 * function ("void (Foo::*Bar::get())(int)").  Parameters never start with
 * '*', '&' or a class's "::*", and a pointer type alone ("void (*)(int)")
 * has no parameters of its own; "decltype (*p())" is an expression. */
static bool declarator_group(const char *begin, const char *p, const char *end)
{
	const char *w = p - 1; /* the '(' */
	if (w > begin && w[-1] == ' ')
		w--;
	if (w - begin >= 8 && memcmp(w - 8, "decltype", 8) == 0 &&
	    (w - 8 == begin || !ident_char(w[-9])))
		return false;
	const char *q = p;
	while (q < end && (ident_char(*q) || *q == ':' || *q == '<')) {
		if (*q == '<') {
			const char *close = closing(begin, q, end);
			if (!close)
				return false;
			q = close + 1;
		} else {
			q++;
		}
	}
	if (q > p && !(q - p >= 2 && q[-1] == ':' && q[-2] == ':'))
		return false; /* a type, not a class's "::*" */
	if (q == end || (*q != '*' && *q != '&'))
		return false;
	return memchr(q, '(', (size_t)(end - q)) != NULL;
}

/* The name at [@p, @end) shortened into @o: false when its brackets do not
 * balance.  @begin: where the whole name starts. */
static bool shorten(const char *begin, const char *p, const char *end, const char *ellipsis,
		    struct out *o, unsigned nest)
{
	if (nest > 64)
		return false;
	const char *op_end = NULL; /* the end of the last operator's name */
	while (p < end) {
		const char *after, *close;
		char c = *p;
		if (operator_at(begin, p, end, &after)) {
			put(o, p, (size_t)(after - p));
			p = op_end = after;
			continue;
		}
		if (starts(p, end, "(anonymous namespace)")) {
			put(o, p, 21);
			p += 21;
			continue;
		}
		if (c != '(' && c != '[' && c != '{' && c != '<') {
			if (c == ')' || c == ']' || c == '}')
				return false;
			put(o, p, 1);
			p++;
			continue;
		}
		if ((close = closing(begin, p, end)) == NULL)
			return false;
		bool empty = close == p + 1;
		if (c == '[') {
			/* an ABI tag is dropped; "[clone .cold]" and the like stay */
			if (!starts(p, end, "[abi:"))
				put(o, p, (size_t)(close + 1 - p));
		} else if ((c == '(' && !declarator_group(begin, p + 1, close)) ||
			   (c == '<' && p > begin && ident_char(p[-1])) ||
			   (c == '<' && op_end && p == op_end) ||
			   (c == '<' && op_end && p == op_end + 1 && p[-1] == ' ')) {
			/* parameters, or template arguments: after a name, or
			 * after an operator's, right after it ("operator+<char>",
			 * "operator()<int>", "operator<<<char>") or after a space
			 * ("operator<< <char>") */
			put(o, p, 1);
			if (!empty)
				put(o, ellipsis, strlen(ellipsis));
			put(o, close, 1);
		} else {
			/* a lambda's or unnamed type's braces; a '<' that starts a
			 * qualified path ("<T as Trait>::f"); the parentheses
			 * around a declarator ("(*std::signal(int))") */
			put(o, p, 1);
			if (!shorten(begin, p + 1, close, ellipsis, o, nest + 1))
				return false;
			put(o, close, 1);
		}
		p = close + 1;
	}
	return true;
}

size_t kit_name_shorten(const char *name, const char *ellipsis, char *out, size_t size)
{
	struct out o = {out, size, 0};
	size_t n = strlen(name);
	if (!shorten(name, name, name + n, ellipsis, &o, 0)) {
		o.len = 0;
		put(&o, name, n);
	}
	if (size)
		out[o.len < size ? o.len : size - 1] = '\0';
	return o.len;
}

size_t kit_name_short_max(const char *name, const char *ellipsis)
{
	size_t n = strlen(name), groups = 0;
	for (size_t i = 0; i < n; i++)
		groups += name[i] == '(' || name[i] == '<';
	return n + groups * strlen(ellipsis) + 1;
}
