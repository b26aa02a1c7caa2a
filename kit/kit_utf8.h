/* leaksnap kit: the one UTF-8 checker (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF).  Header-only: the malloc hook, which
 * links nothing of the kit, uses it too. */
#ifndef LEAKSNAP_KIT_UTF8_H
#define LEAKSNAP_KIT_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length (1 to 4) of the well-formed UTF-8 sequence at @s, of @n
 * bytes; 0 when s[0] starts none; -1 when @s is a proper prefix of one that
 * needs more than @n bytes to decide.  Any ASCII byte, NUL included, is a
 * sequence of 1: for a NUL-terminated string pass (size_t)-1 as @n (the
 * terminator ends every sequence it interrupts). */
static inline int kit_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	int len;
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	for (int i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		unsigned char b = s[i], l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xbf;
		if (b < l || b > h)
			return 0;
	}
	return len;
}

/* One character of text that is safe to keep as it is, wherever untrusted
 * bytes become a line of text (the hook's metadata values, the CLI's
 * terminal filter): printable ASCII, or well-formed UTF-8 other than the
 * C1 controls (U+0080 to U+009F).  Returns as kit_utf8_len(), with 0 for
 * the controls (C0, DEL, C1). */
static inline int kit_text_char(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return c >= 0x20 && c != 0x7f;
	if (c == 0xc2 && n >= 2 && s[1] >= 0x80 && s[1] <= 0x9f)
		return 0; /* C2 80..9F: the C1 controls */
	return kit_utf8_len(s, n);
}

/* Whether the @len bytes at @s are well-formed UTF-8.  kit/utf8.c */
bool kit_utf8_valid(const char *s, size_t len);
/* @s (NUL-terminated) with each byte outside a well-formed sequence
 * replaced by U+FFFD, in a new string (*@len its length); NULL when out
 * of memory.  kit/utf8.c */
char *kit_utf8_fixed(const char *s, size_t *len);

#endif /* LEAKSNAP_KIT_UTF8_H */
