/* varbench-lib THREADS ITERS: varbench with its whole workload -- every
 * allocation site, the callers, the chain -- in a shared library,
 * libvarbench.so (bench/varbench.c built with main renamed), so that the
 * in-app hook can watch that library alone (bench/hook.sh). */
int varbench_main(int argc, char **argv);

int main(int argc, char **argv)
{
	return varbench_main(argc, argv);
}
