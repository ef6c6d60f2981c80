package stats

import "fmt"

// Unit is a time unit for people, hyperfine's way: one unit for a whole line or plot, picked by the
// size of its typical value.
type Unit struct {
	Name string  // "s", "ms", "µs" or "ns"
	NS   float64 // nanoseconds per unit
}

// PickUnit is the unit of ns: s from 1 s, ms from 1 ms, µs from 1 µs, else ns.
func PickUnit(ns float64) Unit {
	switch {
	case ns >= 1e9:
		return Unit{"s", 1e9}
	case ns >= 1e6:
		return Unit{"ms", 1e6}
	case ns >= 1e3:
		return Unit{"µs", 1e3}
	}
	return Unit{"ns", 1}
}

// Format writes ns in the unit: 3 decimals for s, 1 for ms and µs, none for ns ("1.234 s", "12.3 ms").
func (u Unit) Format(ns float64) string {
	switch u.NS {
	case 1:
		return fmt.Sprintf("%.0f ns", ns)
	case 1e9:
		return fmt.Sprintf("%.3f s", ns/u.NS)
	}
	return fmt.Sprintf("%.1f %s", ns/u.NS, u.Name)
}
