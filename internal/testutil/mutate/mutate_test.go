package mutate

import (
	"slices"
	"testing"
)

// Strings is deterministic for a seed, keeps seeds among its outputs (zero edits) and changes most.
func TestStrings(t *testing.T) {
	seeds := []string{"abc:def", ""}
	a := Strings(1, seeds, 1000, 2, []string{"x", "\\"}, ":;")
	if !slices.Equal(a, Strings(1, seeds, 1000, 2, []string{"x", "\\"}, ":;")) {
		t.Fatal("two calls with one seed differ")
	}
	same := 0
	for _, s := range a {
		if slices.Contains(seeds, s) {
			same++
		}
	}
	if len(a) != 1000 || same == 0 || same > 600 {
		t.Fatalf("%d outputs, %d of them a seed: want 1000, some but not most", len(a), same)
	}
}
