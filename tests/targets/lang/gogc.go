// gogc — a Go program whose CPU is mostly garbage collection: a live set
// of linked nodes it keeps replacing, with GOGC set low by test_gc, so the
// mark workers and assists (runtime.gcBgMarkWorker, runtime.gcDrain,
// runtime.gcAssistAlloc) take most of the time.
package main

type node struct {
	next *node
	pad  [6]uint64
}

var live [1 << 16]*node

func main() {
	for i := 0; ; i++ {
		var head *node
		for k := 0; k < 8; k++ {
			head = &node{next: head}
		}
		live[(i*7919)&(len(live)-1)] = head
	}
}
