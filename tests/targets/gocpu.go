// gocpu — a Go target with known shares, for test_go (stripped Go named
// from .gopclntab): one busy goroutine runs main.main -> main.outer ->
// main.middle -> main.leafA | leafB | leafC -> main.spin, 6 : 3 : 1
// rounds of the same loop, so the leaves' totals are 60% / 30% / 10% of
// that goroutine's CPU whatever the machine's load. Beside it, goroutines
// that only wait: one in Accept (the network poller), one sleeping, one
// on a channel; GOMAXPROCS 2 leaves Ms parked in futexsleep (idle).
package main

import (
	"net"
	"runtime"
	"time"
)

const unit = 100000

var sink int

// mix is small enough for Go to inline: its code in spin is an inline
// frame (Go's inline tree names it).
func mix(i, s int) int { return i*i ^ (s >> 3) }

// spin is the work all three leaves share: one body, so the time under
// each leaf follows its count exactly (no loop of its own to be aligned
// differently); spin has no frame, so a frame-pointer walk would skip the
// leaf that called it.
//
//go:noinline
func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += mix(i, s)
	}
	return s
}

//go:noinline
func leafA() int { return spin(6 * unit) }

//go:noinline
func leafB() int { return spin(3 * unit) }

//go:noinline
func leafC() int { return spin(1 * unit) }

//go:noinline
func middle() int { return leafA() + leafB() + leafC() }

//go:noinline
func outer() int { return middle() + 1 }

func main() {
	runtime.GOMAXPROCS(2)
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	go func() {
		for {
			time.Sleep(time.Second)
		}
	}()
	ch := make(chan int)
	go func() { sink += <-ch }()
	for {
		sink += outer()
	}
}
