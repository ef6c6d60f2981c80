package cli

import (
	"math"
	"testing"
)

// TestLimitFor: the soft limit is gcLimit while the live heap is small, then half as much again as
// what is live and the runtime's margin, with no step between (a switch at a live size made the peak
// jump).
func TestLimitFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, gcLimit},
		{30 << 20, gcLimit},
		{96 << 20, gcLimit},
		{120 << 20, 228 << 20},
		{450 << 20, 723 << 20},
		{math.MaxUint64, math.MaxInt64},
	} {
		if got := limitFor(c.live); got != c.want {
			t.Errorf("limitFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}
