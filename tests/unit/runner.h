/*
 * runner.h — the one main() every unit test binary ends with: run the
 * listed tests (cmocka_unit_test(...), ...) as one group, with a group
 * setup and teardown (NULL: none). Include after cmocka.h.
 */
#ifndef STACKTOP_TEST_RUNNER_H
#define STACKTOP_TEST_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

#define TEST_MAIN(group_setup, group_teardown, ...)                                                \
	int main(void)                                                                             \
	{                                                                                          \
		const struct CMUnitTest tests[] = {__VA_ARGS__};                                   \
		return cmocka_run_group_tests(tests, group_setup, group_teardown);                 \
	}

/* A test in the list: TEST(test_x) is cmocka_unit_test(test_x). */
#define TEST(test) cmocka_unit_test(test)

/* A test with the file's own per-test setup and teardown. */
#define TEST_FX(test) cmocka_unit_test_setup_teardown(test, setup, teardown)

/* pred holds for every string of yes[] and for none of no[] (NULL may be
 * one): a failure names the case. CHECK_PRED(f, yes, no) for arrays. */
static inline void check_pred(const char *what, bool (*pred)(const char *), const char *const *yes,
			      size_t nyes, const char *const *no, size_t nno)
{
	for (size_t i = 0; i < nyes + nno; i++) {
		const char *s = i < nyes ? yes[i] : no[i - nyes];

		if (pred(s) != (i < nyes))
			fail_msg("%s(\"%s\") is %s", what, s ? s : "(null)",
				 i < nyes ? "false" : "true");
	}
}

#define CHECK_PRED(pred, yes, no)                                                                  \
	check_pred(#pred, pred, yes, sizeof(yes) / sizeof(yes[0]), no, sizeof(no) / sizeof(no[0]))

#endif
