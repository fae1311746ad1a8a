/* test_symname — names made fit to show: demangled, short, clipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/symbols/symname.h"

static void test_demangle(void **state)
{
	char buf[256];
	const char *r;

	r = symname_demangle("_ZN3foo3barEv", buf, sizeof(buf));
	assert_string_equal(r, "foo::bar()");
	r = symname_demangle("_ZN4core3ptr13drop_in_place17h0123456789abcdefE", buf, sizeof(buf));
	assert_string_equal(r, "core::ptr::drop_in_place");
	r = symname_demangle("_ZNK3std6vectorIiSaIiEE4sizeEv", buf, sizeof(buf));
	assert_string_equal(r, "std::vector<int, std::allocator<int> >::size() const");
	/* Not mangled: the same pointer back. */
	r = symname_demangle("main", buf, sizeof(buf));
	assert_string_equal(r, "main");
	r = symname_demangle("_Zgarbage", buf, sizeof(buf));
	assert_string_equal(r, "_Zgarbage");
	/* Truncated to the buffer, still terminated. */
	r = symname_demangle("_ZN3foo3barEv", buf, 6);
	assert_string_equal(r, "foo::");
}

/* Short names (issue 24): no return type, no parameters, no cv; the
 * template arguments, a lambda's braces, operators and the views'
 * " (inline)" and a clone's suffix stay; C and Rust names unchanged. */
static void test_short_name(void **state)
{
	static const char *const cases[][2] = {
	    {"app::Matrix<double>::multiply_rows(int)", "app::Matrix<double>::multiply_rows"},
	    {"std::vector<int, std::allocator<int> >::size() const",
	     "std::vector<int, std::allocator<int> >::size"},
	    {"int app::sum<int>(std::vector<int, std::allocator<int> > const&)", "app::sum<int>"},
	    {"std::__detail::_Map_base<std::string, std::pair<std::string const, int>>::"
	     "operator[](std::string const&)",
	     "std::__detail::_Map_base<std::string, std::pair<std::string const, "
	     "int>>::operator[]"},
	    {"app::Cmp::operator()(int, int) const", "app::Cmp::operator()"},
	    {"bool app::operator< <int>(app::X<int> const&, app::X<int> const&)",
	     "app::operator< <int>"},
	    {"app::X::operator new(unsigned long)", "app::X::operator new"},
	    {"app::X::operator int() const", "app::X::operator int"},
	    {"main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()"},
	    {"(anonymous namespace)::helper(int)", "(anonymous namespace)::helper"},
	    {"app::run(app::Matrix<double>&) [clone .cold]", "app::run [clone .cold]"},
	    {"app::run(app::Matrix<double>&) (inline)", "app::run (inline)"},
	    {"checksum", "checksum"},
	    {"checksum (inline)", "checksum (inline)"},
	    {"rsburn::hot_loop", "rsburn::hot_loop"},
	    {"strlen@plt", "strlen@plt"},
	    /* Go methods: the receiver's parentheses are no parameter list */
	    {"runtime.(*mcache).nextFree", "runtime.(*mcache).nextFree"},
	    {"sync.(*Mutex).Lock (inline)", "sync.(*Mutex).Lock (inline)"},
	    {"[plt]", "[plt]"},
	};
	char buf[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(symname_short(cases[i][0], buf, sizeof(buf)), cases[i][1]);
	assert_null(symname_short(NULL, buf, sizeof(buf)));
}

/* A name past SYM_NAME_MAX is cut with the mark, inside the limit; one
 * already cut short gets the mark; a short one is left alone. */
static void test_clip(void **state)
{
	static char s[SYM_NAME_MAX + 64];

	memset(s, 'a', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	symname_clip(s, false);
	assert_int_equal(strlen(s), SYM_NAME_MAX - 1);
	assert_string_equal(s + strlen(s) - strlen(SYM_NAME_CUT), SYM_NAME_CUT);
	strcpy(s, "short");
	symname_clip(s, false);
	assert_string_equal(s, "short");
	symname_clip(s, true);
	assert_string_equal(s, "short" SYM_NAME_CUT);
}

TEST_MAIN(NULL, NULL, TEST(test_demangle), TEST(test_short_name), TEST(test_clip))
