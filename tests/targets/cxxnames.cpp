// cxxnames — C++ names and calls through the PLT (issue 24).
//
//   cxxnames [SECONDS]      default: forever
//
// main → shop::run(shop::Basket<long>&, std::string const&) →
//   shop::depth(...) ×13 (direct recursion) →
//     long shop::Basket<long>::total_of(std::string const&, int) const   ~2/5
//   shop::count_bytes(char const* const volatile*, int) → strlen through
//     the PLT                                                          ~3/5
// Demangled whole, the hot function is "long shop::Basket<long>::total_of(
// std::__cxx11::basic_string<...> const&, int) const": cut at 80 columns
// before its own name ends. The short form is shop::Basket<long>::total_of.
// count_bytes calls strlen on a short string many times, and strnlen that
// returns at once, so samples land in the PLT stub itself: "strlen@plt"
// (perf's name), not "[plt]": ~4% of samples (with strlen alone, 0.1%: a
// 2 s batch beside other tests often had none).
// Built like the C targets: -O2 -g, no frame pointers.
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace shop {
template <typename T> struct Basket {
	std::vector<T> items;
	__attribute__((noinline)) T total_of(const std::string &tag, int rounds) const
	{
		T s = 0;
		for (int r = 0; r < rounds; r++)
			for (size_t i = 0; i < items.size(); i++)
				s += items[i] * (T)(i ^ (size_t)r) + (T)tag.size();
		return s;
	}
};

static volatile size_t no_more = 0;

__attribute__((noinline)) size_t count_bytes(const char *const volatile *p, int n)
{
	size_t s = 0;
	for (int i = 0; i < n; i++) {
		s += strlen(*p); // a call through the PLT each time
		s += strnlen(*p, no_more); // returns at once: the stub is a good part of it
	}
	return s;
}

static const char word[] = "ab";
static const char *const volatile word_p = word;

// Direct recursion, 13 calls deep, then the hot member function: the
// icicle folds the 13 rows of "depth" into one bar "shop::depth ×13".
__attribute__((noinline)) long depth(const Basket<long> &b, const std::string &tag, int n)
{
	long r = n > 1 ? depth(b, tag, n - 1) : b.total_of(tag, 40);
	asm volatile("" ::: "memory");
	return r + n; // not a tail call: every level stays on the stack
}

__attribute__((noinline)) long run(Basket<long> &b, const std::string &tag)
{
	long r = depth(b, tag, 13);
	r += (long)count_bytes(&word_p, 15000);
	asm volatile("" ::: "memory");
	return r;
}
} // namespace shop

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	shop::Basket<long> b;
	b.items.assign(2000, 3);
	std::string tag = "fruit";
	volatile long x = 0;
	time_t end = time(nullptr) + (time_t)secs;
	while (secs <= 0 || time(nullptr) < end)
		x = x + shop::run(b, tag);
	return 0;
}
