/* Unit tests for strpool: one copy per distinct string, indices in
 * insertion order that survive growth, stable pointers, length-bounded
 * lookups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/lib/strpool.h"

static void test_dedupe_and_order(void **state)
{
	struct strpool p = {0};
	assert_int_equal(strpool_index(&p, "", 0), 0);
	assert_int_equal(strpool_index(&p, "main", 4), 1);
	assert_int_equal(strpool_index(&p, "leaf", 4), 2);
	assert_int_equal(strpool_index(&p, "main", 4), 1);
	/* Only the first n bytes count. */
	assert_int_equal(strpool_index(&p, "mainly", 4), 1);
	assert_int_equal(strpool_index(&p, "mainly", 6), 3);
	assert_int_equal(p.n, 4);
	const char *a = strpool_cstr(&p, "leaf");
	assert_ptr_equal(a, p.s[2]);
	assert_string_equal(a, "leaf");
	strpool_free(&p);
	assert_int_equal(p.n, 0);
	assert_null(p.s);
}

static void test_growth_keeps_indices_and_pointers(void **state)
{
	struct strpool p = {0};
	char buf[32];
	const char *first = strpool_cstr(&p, "s0");
	for (int i = 0; i < 10000; i++) {
		snprintf(buf, sizeof(buf), "s%d", i);
		assert_int_equal(strpool_index(&p, buf, strlen(buf)), i);
	}
	for (int i = 0; i < 10000; i += 997) {
		snprintf(buf, sizeof(buf), "s%d", i);
		assert_int_equal(strpool_index(&p, buf, strlen(buf)), i);
	}
	assert_ptr_equal(strpool_cstr(&p, "s0"), first);
	assert_int_equal(p.n, 10000);
	strpool_free(&p);
}

static void test_hash(void **state)
{
	/* FNV-1a reference values. */
	assert_int_equal(strpool_hash("", 0), 0xcbf29ce484222325ull);
	assert_int_equal(strpool_hash("a", 1), 0xaf63dc4c8601ec8cull);
}

/* Counted strings (issue 28: names that follow the window): freed at the
 * last unref, their index and buffer reused, the pool's size set by its
 * peak, not its history. */
static void test_counted(void **state)
{
	struct strpool p = {0};
	char buf[64];
	const char *a = strpool_ref(&p, "alpha"), *b;

	assert_non_null(a);
	assert_ptr_equal(strpool_ref(&p, "alpha"), a);
	assert_int_equal(strpool_live(&p), 1);
	strpool_unref(&p, a);
	assert_int_equal(strpool_live(&p), 1);
	strpool_unref(&p, a);
	assert_int_equal(strpool_live(&p), 0);
	/* same size class: the same buffer, holding the new string */
	b = strpool_ref(&p, "gamma");
	assert_ptr_equal(b, a);
	assert_string_equal(b, "gamma");
	assert_int_equal(p.n, 1);
	strpool_unref(&p, b);
	strpool_unref(&p, NULL);
	/* a million names, at most 100 held at once: 100 slots */
	for (int i = 0; i < 1000000; i++) {
		snprintf(buf, sizeof(buf), "jit_name_%d", i);
		assert_non_null(strpool_ref(&p, buf));
		if (i >= 99) {
			snprintf(buf, sizeof(buf), "jit_name_%d", i - 99);
			strpool_unref(&p, strpool_ref(&p, buf));
			strpool_unref(&p, strpool_str(&p, buf, strlen(buf)));
		}
	}
	assert_int_equal(strpool_live(&p), 99);
	assert_true(p.n <= 100);
	strpool_free(&p);
}

TEST_MAIN(NULL, NULL, TEST(test_dedupe_and_order), TEST(test_growth_keeps_indices_and_pointers),
	  TEST(test_hash), TEST(test_counted))
