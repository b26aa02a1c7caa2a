/* A library with 1,700 bytes of initial-exec TLS: dlopen()ed first, it
 * takes glibc's surplus for such libraries (t-inapp.sh: the in-app
 * collector then cannot be dlopen()ed, and says why). */
__attribute__((tls_model("initial-exec"))) __thread char bigtls_block[1700];

char *bigtls_at(int i);
char *bigtls_at(int i)
{
	return &bigtls_block[i];
}
