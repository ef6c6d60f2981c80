//go:build !linux

package hugeheap

// advise does nothing outside Linux: no transparent huge pages to ask for.
func advise(p, n uintptr) bool { return false }

// wanted is false outside Linux.
func wanted() bool { return false }
