/* A library that never references an allocation function (test_got). */
#define API __attribute__((visibility("default")))

API int got_none_add(int a, int b);

int got_none_add(int a, int b)
{
	return a + b;
}
