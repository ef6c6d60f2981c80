package cli

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// tuneGC makes the garbage collector run only when it must for check, run and runs, whose heap is short-lived
// (a check of the 615-unit real workspace allocates some 40 MB and ends): no proportional trigger
// (GOGC off; it was 400, and 100 before that), only a soft memory limit of 128 MiB, so a large tree
// still collects before growing far and a small one never does. Measured on that workspace
// (interleaved pairs, medians): GOGC 400 against 100, CPU 0.75x, wall 0.80x; off against 400, the same
// time, 69 -> 73 MB peak RSS. On the synthetic 28,905-unit tree, off against 400: 1.14 -> 1.06 s wall,
// CPU 1.92 -> 1.79 s, the same peak RSS (141-142 MB) and number of collections (6, all at the limit):
// the early collections of a growing heap are gone, and with them the write barriers they switch on
// while the read builds its steps.
//
// The limit itself (measured at GOGC 400, where the limit also decided the large tree's collections):
// the synthetic 28,905-unit tree (live heap at most 69 MB after a forced collection, 62-78 MB by the
// collector's own count) peaked at 147 MiB RSS under 136 MiB against 196-201 MiB under 192 MiB, for 8%
// more time (1.40 against 1.30 s, medians of 5 interleaved runs; issue 26 asks for 150 MB). Since the
// read allocates a quarter less (6 collections where it took 9), 128 MiB holds it to 138-139 MiB
// (145-146 MB) in the same time as 136 MiB (1.12-1.14 s, medians of 6 interleaved runs).
//
// A heap that stays above the limit (the first check of a 28,000-unit tree holds about 450 MB live)
// would make the collector run back to back, capped at half the CPU: 55% of that check's samples were
// the collector. So after each collection the live heap is looked at, and once it is more than two
// thirds of gcLimit the limit is raised to half as much again as what is live, plus the runtime's
// margin (limitFor): the heap then grows by about half its live size between collections. That is a
// step (a tree whose live heap crosses it peaks some 40 MiB higher), which keeps the collections of a
// heap just under it few. A check that records that tree (fresh state folder, 130-150 MB live) takes
// 3.2-3.5 s. (A switch to GOGC 100 past a live size of 160 MB, as before, was a cliff: the synthetic
// 28,905-unit tree peaks at 157 to 161 MB live, and its peak RSS jumped from 300 to 400 MB with a
// megabyte more.) GOGC or GOMEMLIMIT in the environment win: nothing is changed then.
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(gcLimit)
	watchLiveHeap()
}

const gcLimit = 128 << 20

// watchLiveHeap arms a finalizer that runs after every collection (a new sentinel each time) and sets
// the limit for the live heap it finds.
func watchLiveHeap() {
	sentinel := new([16]byte)
	runtime.SetFinalizer(sentinel, func(*[16]byte) {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		if s[0].Value.Kind() == metrics.KindUint64 {
			debug.SetMemoryLimit(limitFor(s[0].Value.Uint64()))
		}
		watchLiveHeap()
	})
}

// limitFor is the soft memory limit for a live heap of live bytes: gcLimit while that is at most two
// thirds of it (the collector's own count of what is live, which takes in what was allocated while it
// ran: some megabytes over the heap a forced collection leaves), else half as much again as what is live, plus what the runtime holds beside the heap (the limit
// counts all of it: spans not yet swept, metadata, stacks), about 48 MiB at that size. Without that margin a check that records a large tree (130-150 MB live)
// had a heap goal a few megabytes over its live heap under a 192 MiB limit: 44 collections, 35% more
// time.
func limitFor(live uint64) int64 {
	if live > math.MaxInt64/2 {
		return math.MaxInt64
	}
	if live <= gcLimit*2/3 {
		return gcLimit
	}
	return max(gcLimit, int64(live)*3/2+limitMargin)
}

const limitMargin = 48 << 20
