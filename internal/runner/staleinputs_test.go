package runner

import (
	"slices"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
)

// TestStaleInputsNamesWhatChanged: a refusal names the inputs that changed: a finding's "input"
// evidence, except for a changed lookup, whose change is the file found now (its "input" is the
// source that searches, unchanged).
func TestStaleInputsNamesWhatChanged(t *testing.T) {
	p := &Plan{Blocking: []check.Finding{
		{Rule: "path-lookup-changed", Evidence: []check.Evidence{
			{Kind: "now", Path: "/w/inc1/config.h"}, {Kind: "then", Path: "/w/inc2/config.h"}, {Kind: "input", Path: "/w/main.c"}}},
		{Rule: "pending-rebuild", Evidence: []check.Evidence{{Kind: "input", Path: "/w/util.c"}, {Kind: "reference", Path: "/w/util.o"}}},
	}}
	if got, want := p.StaleInputs(), []string{"/w/inc1/config.h", "/w/util.c"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
