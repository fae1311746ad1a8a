// A C++ target with a known hot path under a template member and a namespace:
// main -> app::run -> app::Matrix<double>::multiply_rows, built without frame pointers.
#include <cstdio>
#include <vector>
#include <string>
namespace app {
template <typename T> struct Matrix {
	std::vector<T> v;
	__attribute__((noinline)) T multiply_rows(int n) {
		T s = 0;
		for (int k = 0; k < n; k++)
			for (size_t i = 0; i < v.size(); i++) s += v[i] * (T)(i ^ k);
		return s;
	}
};
__attribute__((noinline)) double run(Matrix<double> &m) { double r = m.multiply_rows(2000); asm volatile("" ::: "memory"); return r + 1; }
}
int main() { app::Matrix<double> m; m.v.assign(10000, 1.5); volatile double x = 0; for (;;) x += app::run(m); }
