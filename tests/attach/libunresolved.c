/* A library dlopen(RTLD_NOW) refuses: it calls a function nothing defines
 * (tests/t-attach.sh: the message is the target's dlerror()). */
extern int leaksnap_test_no_such_function(void);

int leaksnap_test_unresolved(void);
int leaksnap_test_unresolved(void)
{
	return leaksnap_test_no_such_function();
}
