package cli

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The status line shows on a terminal once the work outlasts the delay and is cleared by stop; in a
// pipe nothing is written.
func TestProgressOnlyOnATerminal(t *testing.T) {
	old := progressDelay
	progressDelay = 10 * time.Millisecond
	defer func() { progressDelay = old }()

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stop := startProgress(w, "Checking /x")
	time.Sleep(50 * time.Millisecond)
	stop()
	w.Close()
	var piped bytes.Buffer
	piped.ReadFrom(r)
	if piped.Len() != 0 {
		t.Errorf("a pipe got %q", piped.String())
	}

	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptm.Close()
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the pseudo-terminal: %v", err)
	}
	defer pts.Close()
	stop = startProgress(pts, "Checking /x")
	time.Sleep(100 * time.Millisecond)
	stop()
	buf := make([]byte, 256)
	ptm.SetReadDeadline(time.Now().Add(2 * time.Second))
	var got []byte
	for !bytes.Contains(got, []byte("\x1b[K")) {
		k, err := ptm.Read(buf)
		if err != nil {
			break
		}
		got = append(got, buf[:k]...)
	}
	if s := string(got); !strings.Contains(s, "Checking /x…") || !strings.HasSuffix(s, "\r\x1b[K") {
		t.Errorf("the terminal got %q, want the status line and then its clearing", s)
	}
	// Work that ends within the delay prints nothing.
	stop = startProgress(pts, "quick")
	stop()
}
