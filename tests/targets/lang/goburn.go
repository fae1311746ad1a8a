// A Go target with a known hot path: main.main -> main.worker -> main.hotLoop.
package main

//go:noinline
func hotLoop(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i ^ (s >> 3)
	}
	return s
}

//go:noinline
func worker() int { return hotLoop(50000000) + 1 }

func main() {
	x := 0
	for {
		x += worker()
	}
}
