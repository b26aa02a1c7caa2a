/* leaksnap CLI: KEY=VALUE options naming run labels. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "labels.h"

int cli_labels_add(struct cli_labels *l, const char *cmd, const char *opt, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return cli_usage_error(cmd, "%s needs KEY=VALUE", opt);
	if (l->n == CLI_LABELS_MAX)
		return cli_usage_error(cmd, "more than %d %s options", CLI_LABELS_MAX, opt);
	char *key = strdup(arg);
	if (!key)
		return cli_fail(NULL, "out of memory");
	key[eq - arg] = '\0';
	l->text[l->n] = key;
	l->v[l->n++] = (struct leaksnap_store_label){key, key + (eq - arg) + 1};
	return 0;
}

void cli_labels_release(struct cli_labels *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->text[i]);
	l->n = 0;
}
