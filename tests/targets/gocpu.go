// gocpu — a Go target with known shares, for test_go (stripped Go named
// from .gopclntab): one busy goroutine runs main.main -> main.outer ->
// main.middle -> main.leafA | leafB | leafC, whose loops run 6 : 3 : 1
// iterations of the same body, so their totals are 60% / 30% / 10% of
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

//go:noinline
func leafA() int {
	s := 0
	for i := 0; i < 6*unit; i++ {
		s += i*i ^ (s >> 3)
	}
	return s
}

//go:noinline
func leafB() int {
	s := 0
	for i := 0; i < 3*unit; i++ {
		s += i*i ^ (s >> 3)
	}
	return s
}

//go:noinline
func leafC() int {
	s := 0
	for i := 0; i < 1*unit; i++ {
		s += i*i ^ (s >> 3)
	}
	return s
}

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
