// Package unit holds what only Cargo knows about a step of the provenance graph: the unit's fingerprint
// hash and folder, its build script's declarations, the Precalculated fingerprint, where Cargo takes the
// package from. The Cargo adapter (internal/cargo) stores a *Unit in each graph.Step's Origin; Cargo-only
// rules (internal/check) and commands (explain, clean, which) read it through Of.
//
// It is its own small package so that check, explain and the other readers can use the Cargo type without
// importing the adapter (internal/cargo imports them for nothing, but keeping the type apart keeps the
// dependency one way: graph ← unit ← cargo, graph ← unit ← check).
package unit

import "github.com/stalecheck/stalecheck/internal/graph"

// System is the graph.Step.System of every Cargo step.
const System = "cargo"

// Unit is a Cargo unit as recorded under `<profile>/.fingerprint/<pkg>-<hash>/` (cargo 1.95 layout).
type Unit struct {
	Hash string // unit hash (folder suffix), 16 hex digits
	// Target is the fingerprint file name, e.g. "bin-gpu-prover", "run-build-script-build-script-build".
	Target          string
	FingerprintDir  string // <profile>/.fingerprint/<pkg>-<hash>, absolute
	FingerprintHash string // contents of the hash file (LE hex); "" when empty or missing; also the step's Key
	HasLocal        bool   // the fingerprint JSON was read and its `local` list is known
}

// Of returns the Cargo unit behind a step. A step of another system (or one built by hand in a test) has
// none: Of then returns a fresh empty Unit, so a reader sees zero values rather than a nil pointer.
func Of(s *graph.Step) *Unit {
	if s != nil {
		if u, ok := s.Origin.(*Unit); ok {
			return u
		}
	}
	return &Unit{}
}

// Is reports whether the step is a Cargo unit.
func Is(s *graph.Step) bool {
	_, ok := s.Origin.(*Unit)
	return ok
}
