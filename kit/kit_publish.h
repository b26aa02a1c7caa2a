/* leaksnap kit: publishing a file without replacing anything.  Every file
 * leaksnap writes is written under a temporary name beside its target and
 * then given its name in one step, so that the name holds either nothing
 * or the complete file; an existing file is never replaced unless the
 * caller has decided it may be (a report leaksnap wrote itself). */
#ifndef LEAKSNAP_KIT_PUBLISH_H
#define LEAKSNAP_KIT_PUBLISH_H

/* What every refusal to replace a file says after its name. */
#define KIT_NEVER_OVERWRITES "already exists (leaksnap never overwrites a file)"

/* Create a short temporary name in @path's directory (so that a target
 * name near NAME_MAX still works), exclusively and never through a link,
 * mode 0644 less the umask: its descriptor, or -1 with errno set.  *@tmp
 * gets the name (to free), NULL on failure. */
int kit_temp_beside(const char *path, char **tmp);

/* Give a temporary file made by mkstemp (mode 0600) the mode of any file
 * leaksnap writes: 0644 less the umask. */
void kit_temp_mode(int fd);

/* Give the complete file @tmp the name @path unless @path exists: a hard
 * link (0: @tmp is still there, to be removed), or, on a file system
 * without hard links, a rename that never replaces (1: @tmp is gone);
 * -errno on failure (-EEXIST: @path exists). */
int kit_publish_noreplace(const char *tmp, const char *path);

#endif /* LEAKSNAP_KIT_PUBLISH_H */
