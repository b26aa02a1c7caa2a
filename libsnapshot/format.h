/* leaksnap: on-disk constants of the LEAKSNAP v1 container.
 * Shared by libsnapshot and the malloc hook (which must not depend on the
 * rest of the library); see docs/format.md. */
#ifndef LEAKSNAP_FORMAT_H
#define LEAKSNAP_FORMAT_H

#define LEAKSNAP_MAGIC "LEAKSNAP"
#define LEAKSNAP_MAGIC_LEN 8
#define LEAKSNAP_VERSION 1

/* DDMS NHGT payload signature (little-endian u32 at offset 0). */
#define LEAKSNAP_NHGT_SIGNATURE 0x812345ddu

#define LEAKSNAP_TEXT_HEADER "Android Native Heap Dump v"

/* One character of text that is safe to keep as it is, wherever untrusted
 * bytes become a line of text (the hook's metadata values, the CLI's
 * terminal filter): printable ASCII, or well-formed UTF-8 other than the
 * C1 controls (U+0080 to U+009F).  Returns its length at @s (of @n bytes),
 * 0 when s[0] is not one (nor the start of one), or -1 when @s is a
 * proper prefix of one that needs more than @n bytes to decide. */
static inline int leaksnap_text_char(const unsigned char *s, unsigned long n)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return c >= 0x20 && c != 0x7f;
	int len;
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, lo = c == 0xc2 ? 0xa0 : 0x80; /* C2 80..9F are C1 controls */
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	for (int i = 1; i < len; i++) {
		if ((unsigned long)i >= n)
			return -1;
		unsigned char b = s[i], l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xbf;
		if (b < l || b > h)
			return 0;
	}
	return len;
}

/* Metadata values are one line of text: the hook writes paths and command
 * lines with every byte that does not start a leaksnap_text_char()
 * replaced by '?', one for one.  How many bytes at @s[@i] (of @n) are kept
 * as they are: 0 when s[i] is replaced.  Readers apply it to a maps path
 * to find that module's build_id= line. */
static inline unsigned leaksnap_meta_keep(const unsigned char *s, unsigned long n,
					  unsigned long i)
{
	int len = leaksnap_text_char(s + i, n - i);
	return len > 0 ? (unsigned)len : 0;
}

#endif
