// gosig — a Go target often caught in its signal handler, for test_go.
// The main goroutine, locked to its thread, runs main.deep, which recurses
// 20 calls down to main.burn, whose loop makes no call but which has a
// frame (it calls main.tail after the loop). A second goroutine, locked to
// another thread, sends that thread SIGURG (Go's preemption signal, which
// the handler ignores when no preemption was asked for) as fast as it can,
// so a good share of the main thread's time is spent in Go's handler, on
// its signal stack, where the goroutine's frames are not in perf's stack
// copy.
package main

import (
	"runtime"
	"sync/atomic"
	"syscall"
)

var sink int

//go:noinline
func tail(s int) int { return s & 1 }

//go:noinline
func burn(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i*i ^ (s >> 3)
	}
	return s + tail(s)
}

//go:noinline
func deep(d int) int {
	if d == 0 {
		return burn(20000000)
	}
	return deep(d-1) + 1
}

func signaller(pid int, tid *int32) {
	runtime.LockOSThread()
	for {
		syscall.Tgkill(pid, int(atomic.LoadInt32(tid)), syscall.SIGURG)
	}
}

func main() {
	runtime.LockOSThread()
	var tid int32
	atomic.StoreInt32(&tid, int32(syscall.Gettid()))
	go signaller(syscall.Getpid(), &tid)
	for {
		sink += deep(20)
	}
}
