/* leaksnap diff / leakdiff: not built yet (its own issue). */
#include <string.h>

#include "cli.h"

int cmd_diff(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0) {
			printf("Usage: leakdiff OLD.dump NEW.dump...\n\n"
			       "Snapshot comparison is not available in this version of leaksnap;\n"
			       "use 'leaksnap show' on each snapshot.\n");
			return cli_finish_stdout(EXIT_OK);
		}
	}
	return cli_fail("diff", "snapshot comparison is not available in this version");
}
