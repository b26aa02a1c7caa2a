/* leaksnap CLI: --version, with the versions of the libraries the program
 * runs with, as they report themselves at run time (a shared library may
 * be newer than the headers it was built against). */
#include <elfutils/libdwfl.h>
#include <jansson.h>
#include <protobuf-c/protobuf-c.h>
#include <zip.h>
#include <zlib.h>

#include "cli.h"

int cli_print_version(const char *prog)
{
	printf("%s %s\n", prog, LEAKSNAP_VERSION_STRING);
	/* elfutils: libdw and libelf are one release */
	const char *dw = dwfl_version(NULL);
	printf("libdw %s\n", dw && *dw ? dw : "unknown");
#if JANSSON_VERSION_HEX >= 0x020d00
	printf("jansson %s\n", jansson_version_str());
#else
	printf("jansson %s\n", JANSSON_VERSION); /* (older: the headers' version) */
#endif
	printf("libzip %s\n", zip_libzip_version());
	printf("zlib %s\n", zlibVersion());
	printf("protobuf-c %s\n", protobuf_c_version()); /* (the pprof writer) */
	/* libiberty (the demangler) is a static library with no version of its
	 * own: the build says which package it came from, when it knows */
#ifdef LEAKSNAP_LIBIBERTY_VERSION
	printf("libiberty %s (built in)\n", LEAKSNAP_LIBIBERTY_VERSION);
#else
	printf("libiberty unknown (built in)\n");
#endif
	return cli_finish_stdout(EXIT_OK);
}
