/* leaksnap control: the stats answer, one JSON object on one line
 * (control.h). */
#include <string.h>

#include <jansson.h>

#include "control.h"
#include "kit.h"

int control_stats_parse(const char *line, struct control_stats *s, const char *subject,
			struct leaksnap_error *err)
{
	static const char *const counts[] = {"live_bytes",	    "live_blocks",
					     "records",		    "dumps_written",
					     "invalid_frees",	    "sample_interval",
					     "estimated_live_bytes", "estimated_live_blocks"};
	uint64_t *dst[] = {&s->live_bytes,      &s->live_blocks,	  &s->records,
			   &s->dumps_written,   &s->invalid_frees,	  &s->sample_interval,
			   &s->estimated_live_bytes, &s->estimated_live_blocks};
	char q[200];
	json_error_t je;
	leaksnap_error_clear(err);
	memset(s, 0, sizeof(*s));
	json_t *o = line[0] == '{' ? json_loads(line, JSON_REJECT_DUPLICATES, &je) : NULL;
	if (!o || !json_is_object(o)) {
		json_decref(o);
		control_quote(line, strlen(line), 80, q, sizeof(q));
		kit_error(err, LEAKSNAP_ERR_FORMAT, subject,
			  CONTROL_TEXT_MALFORMED "%s (expected the stats JSON object)", q);
		return CONTROL_E_MALFORMED;
	}
	const char *missing = NULL;
	json_t *v = json_object_get(o, "pid");
	if (!json_is_integer(v) || json_integer_value(v) <= 0)
		missing = "pid";
	else
		s->pid = json_integer_value(v);
	/* sample_interval first: what else must be there hangs on it (absent
	 * or 0: every block tracked, as from a hook before sampling) */
	v = json_object_get(o, "sample_interval");
	bool sampled = v && !(json_is_integer(v) && json_integer_value(v) == 0);
	for (size_t i = 0; !missing && i < sizeof(counts) / sizeof(counts[0]); i++) {
		v = json_object_get(o, counts[i]);
		bool optional = sampled ? !strcmp(counts[i], "invalid_frees")
					: !strcmp(counts[i], "sample_interval") ||
						  !strncmp(counts[i], "estimated_", 10);
		if (optional && (!v || json_is_null(v)))
			continue;
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			missing = counts[i];
		else
			*dst[i] = (uint64_t)json_integer_value(v);
	}
	if (!missing && sampled && s->sample_interval == 0)
		missing = "sample_interval";
	s->has_invalid_frees = json_is_integer(json_object_get(o, "invalid_frees"));
	v = json_object_get(o, "capture");
	if (!missing && !json_is_boolean(v))
		missing = "capture";
	else if (!missing)
		s->capture = json_is_true(v);
	json_decref(o);
	if (missing) {
		kit_error(err, LEAKSNAP_ERR_FORMAT, subject,
			  CONTROL_TEXT_MALFORMED "stats without a valid \"%s\"", missing);
		return CONTROL_E_MALFORMED;
	}
	return 0;
}

int control_stats(struct control_conn *c, struct control_stats *s, char *line, size_t size,
		  struct leaksnap_error *err)
{
	int r = control_command(c, "stats", line, size, err);
	if (r)
		return r;
	return control_stats_parse(line, s, control_subject(c), err);
}
