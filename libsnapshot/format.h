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

/* Metadata values are one line of text: the hook writes paths and command
 * lines with every byte replaced by '?', one for one, except printable
 * ASCII and well-formed UTF-8 other than the C1 controls (U+0080 to
 * U+009F).  This says how many bytes at @s[@i] (of @n) are kept as they
 * are: 0 when s[i] is replaced.  Readers apply it to a maps path to find
 * that module's build_id= line. */
static inline unsigned leaksnap_meta_keep(const unsigned char *s, unsigned long n,
					  unsigned long i)
{
	unsigned char c = s[i];
	if (c >= 0x20 && c < 0x7f)
		return 1;
	unsigned len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
		     : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!len || n - i < len)
		return 0;
	unsigned char lo = 0x80, hi = 0xbf;  /* the second byte's range */
	if (c == 0xc2)
		lo = 0xa0;                   /* not C1 */
	else if (c == 0xe0)
		lo = 0xa0;                   /* not overlong */
	else if (c == 0xed)
		hi = 0x9f;                   /* not a surrogate */
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;                   /* not above U+10FFFF */
	if (s[i + 1] < lo || s[i + 1] > hi)
		return 0;
	for (unsigned k = 2; k < len; k++)
		if (s[i + k] < 0x80 || s[i + k] > 0xbf)
			return 0;
	return len;
}

#endif
