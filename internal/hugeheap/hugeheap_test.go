package hugeheap

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestDisabled(t *testing.T) {
	for in, want := range map[string]bool{
		"":                            false,
		"disablethp=1":                true,
		"disablethp=0":                false,
		"gctrace=1,disablethp=1":      true,
		"disablethp=1, disablethp=0":  false,
		"madvdontneed=1,disablethp=1": true,
		"xdisablethp=1":               false,
	} {
		if got := disabled(in); got != want {
			t.Errorf("disabled(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestAdviceReachesTheHeap checks the mechanism the package comment describes: after Advise, a large
// object the heap hands out next lies in a mapping the kernel marks for huge pages ("hg" in smaps).
func TestAdviceReachesTheHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("transparent huge pages are Linux's")
	}
	if disabled(os.Getenv("GODEBUG")) {
		t.Skip("GODEBUG has disablethp=1")
	}
	mode, err := os.ReadFile(thpFile)
	if err != nil || !strings.Contains(string(mode), "[madvise]") {
		t.Skipf("the advice changes nothing here: transparent huge pages %q (%v)", mode, err)
	}
	Advise()
	if !advised {
		t.Fatal("the advice was refused on a kernel with transparent huge pages")
	}
	b := make([]byte, 8<<20)
	b[0], b[len(b)-1] = 1, 1
	// Its middle: the object may begin below the advised range, which is rounded inward to whole
	// huge pages and may follow free pages of the heap's first piece.
	p := uintptr(unsafe.Pointer(&b[len(b)/2]))
	flags, ok := vmFlags(t, p)
	if !ok {
		t.Fatalf("no mapping holds %#x", p)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the mapping holding a new 8 MiB object (%#x) is not advised for huge pages: VmFlags %q", p, flags)
	}
	runtime.KeepAlive(b)
	// A second call does nothing more (once per process).
	Advise()
}

// vmFlags returns the VmFlags of the mapping of this process that holds p.
func vmFlags(t *testing.T, p uintptr) (string, bool) {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) >= 5 && strings.Count(f[0], "-") == 1 && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			s, err1 := strconv.ParseUint(lo, 16, 64)
			e, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uintptr(s) <= p && p < uintptr(e)
			continue
		}
		if in && strings.HasPrefix(l, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmFlags:")), true
		}
	}
	return "", false
}
