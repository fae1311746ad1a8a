/*
 * runner.h — the one main() every unit test binary ends with: run the
 * listed tests (cmocka_unit_test(...), ...) as one group, with a group
 * setup and teardown (NULL: none). Include after cmocka.h.
 */
#ifndef STACKTOP_TEST_RUNNER_H
#define STACKTOP_TEST_RUNNER_H

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

#endif
