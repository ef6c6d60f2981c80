package cli

import (
	"fmt"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/systems"
)

// cleanNotCargo turns cargo.Locate's error for `clean PATH` into one that says clean is Cargo's only,
// naming the Make, Ninja or Go builds found at or under PATH (systems.Detect) and how each system
// cleans its own outputs; err unchanged when none is found.
func cleanNotCargo(path string, err error) error {
	var other []string
	for _, f := range systems.Detect(path) {
		if f.System == unit.System {
			continue
		}
		how := map[string]string{"make": "make clean", "ninja": "ninja -t clean", "go": "go clean"}[f.System]
		other = append(other, fmt.Sprintf("a %s build at %s (%s; its own cleaner: %s)", f.System, f.Dir, f.Why, how))
	}
	if len(other) == 0 {
		return err
	}
	return fmt.Errorf("clean removes Cargo build folders only, and %s is not in a Cargo workspace (%v); found %s: stalecheck does not clean those", path, err, strings.Join(other, "; "))
}
