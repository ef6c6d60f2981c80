// Package hugeheap asks the kernel to back the heap a full check is about to grow with transparent
// huge pages (2 MiB) instead of 4 KiB pages, once per process.
//
// # Why
//
// Go maps its heap without that advice, and where the system's transparent-huge-page setting is
// `madvise` (Debian's default) every 4 KiB page the heap touches for the first time is a page fault. A
// check is a short-lived process whose garbage collector stays off (internal/cli's gctune.go), so
// nearly every byte it allocates is a page it touches for the first time: the first check after an
// edit and rebuild of the real 615-unit workspace allocates some 50 MB, 12,300 page faults. On the
// 2-core development machine, a virtual one where a fault also traps to the host, one fault cost 10 µs
// (a 4 KiB-page loop over 64 MiB: 10.2-10.6 µs a page; with the advice, 0.44 µs a 4 KiB part), and the
// faults were a third of that check's CPU time. A hit of the verdict cache touches about 14 MB, most
// of it the executable itself, and does not ask: only the full computation does.
//
// # How
//
// The runtime reserves the heap's address space and maps it as the heap grows, each piece a fresh
// mapping without the advice (advice given to the reservation beforehand is lost with it). So Advise
// gives it through an allocation: one large byte slice, fresh mapped memory the runtime does not zero
// and nothing touches, is marked with madvise(MADV_HUGEPAGE), then freed by a collection while the
// heap is still small. The page allocator hands out the lowest free addresses first, so the objects
// allocated next live in the marked range. Nothing is touched here: a page comes when the heap first
// uses it, 2 MiB at a time where the kernel has one free, else 4 KiB as before. Bytes is more than the
// real workspace's check touches and less than the synthetic 28,905-unit tree's peak; the advice costs
// nothing until a page is used.
//
// The collection costs 3-9 ms (2.5 ms even on an empty heap), against about 110 ms of faults saved on
// that check; check and run start it from the verdict cache's OnMiss: before the other look-ups when
// one of the verdict's first-look entries (the outputs the build wrote last) changed, else as soon as
// the look-up meets a change, beside the look-ups that remain (and call Advise again before the full
// check, which waits for it or gives it where the look-up had no memos to go through).
//
// GODEBUG=disablethp=1, the runtime's own switch against huge pages, leaves it out, and so does any
// mode but `madvise` (under `always` the heap has huge pages already, under `never` it cannot have
// them), a kernel without transparent huge pages and any other platform: the collection is not paid
// for nothing.
package hugeheap

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"unsafe"
)

// thpFile is where Linux says its transparent-huge-page mode: "always [madvise] never", the one in
// brackets chosen.
const thpFile = "/sys/kernel/mm/transparent_hugepage/enabled"

// Bytes is the size of the heap range advised.
const Bytes = 128 << 20

var once sync.Once

// advised records whether the advice was taken (for tests).
var advised bool

// Advise gives the advice, the first time it is called in this process (see the package comment).
func Advise() {
	once.Do(func() {
		if disabled(os.Getenv("GODEBUG")) || !wanted() {
			return
		}
		// No soft memory limit while the slice is held (the caller's 128 MiB, internal/cli's gctune.go):
		// over it, the allocation starts a collection of its own and the allocator returns free pages
		// to the kernel at once (the first check after a rebuild, medians of 11 and of 15 interleaved
		// pairs: 154.3 -> 145.7 ms and 129.6 -> 127.0 ms).
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
		b := make([]byte, Bytes)
		advised = advise(uintptr(unsafe.Pointer(unsafe.SliceData(b))), Bytes)
		runtime.KeepAlive(b)
		b = nil
		if advised {
			runtime.GC()
		}
	})
}

// disabled reports whether a GODEBUG value turns the runtime's huge pages off (disablethp=1; the last
// setting of a name wins, as the runtime reads it).
func disabled(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == "disablethp" {
			off = v == "1"
		}
	}
	return off
}
