/* Symbolizer fixture: the second unit of plain.c. */
__attribute__((noinline)) int plain_other(int x) /* LINE plain_other */
{
	return x * 7 - 1;
}
