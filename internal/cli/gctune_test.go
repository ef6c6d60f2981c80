package cli

import (
	"math"
	"testing"
)

// TestLimitFor: the soft limit is gcLimit while the live heap is at most two thirds of it, then half as
// much again as what is live and the runtime's margin (a step up at that size: a heap that large would
// be collected back to back under gcLimit).
func TestLimitFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, gcLimit},
		{30 << 20, gcLimit},
		{gcLimit * 2 / 3, gcLimit},
		{gcLimit*2/3 + 1, (gcLimit*2/3+1)*3/2 + limitMargin},
		{120 << 20, 228 << 20},
		{450 << 20, 723 << 20},
		{math.MaxUint64, math.MaxInt64},
	} {
		if got := limitFor(c.live); got != c.want {
			t.Errorf("limitFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}
