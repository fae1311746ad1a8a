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

TEST_MAIN(NULL, NULL, cmocka_unit_test(test_dedupe_and_order),
	  cmocka_unit_test(test_growth_keeps_indices_and_pointers), cmocka_unit_test(test_hash))
