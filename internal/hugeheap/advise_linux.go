package hugeheap

import (
	"os"
	"strings"
	"syscall"
)

// madvHugepage is Linux's MADV_HUGEPAGE (package syscall does not name it).
const madvHugepage = 14

// hugePage is the size of a transparent huge page on the platforms Go supports on Linux that have them
// (x86-64, arm64 with 4 KiB base pages); the advice applies to whole huge pages inside the range.
const hugePage = 2 << 20

// advise marks [p, p+n) rounded inward to whole huge pages; false when nothing was marked (a range
// smaller than a huge page, a kernel without transparent huge pages: EINVAL).
func advise(p, n uintptr) bool {
	beg, end := (p+hugePage-1)&^(hugePage-1), (p+n)&^(hugePage-1)
	if beg >= end {
		return false
	}
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, beg, end-beg, madvHugepage)
	return errno == 0
}

// wanted reports whether the advice would change anything: only in the `madvise` mode. Under
// `always` the heap gets huge pages without it, under `never` not even with it, and a kernel without
// the file has none; the collection the advice costs is then left out.
func wanted() bool {
	b, err := os.ReadFile(thpFile)
	return err == nil && strings.Contains(string(b), "[madvise]")
}
