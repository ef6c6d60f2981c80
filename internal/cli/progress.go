package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stalecheck/stalecheck/internal/report"
)

// progressDelay is how long work runs before a status line says what it is doing: a warm check
// answers well within it and prints nothing.
var progressDelay = 500 * time.Millisecond

// startProgress shows what in words on w ("Checking /src/prover…") once the work has taken
// progressDelay, only when w is a terminal (never in a pipe or a file); the returned stop clears the
// line, and must be called before anything else is written to the terminal.
func startProgress(w io.Writer, what string) (stop func()) {
	f, ok := w.(*os.File)
	if !ok {
		return func() {}
	}
	if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err != nil {
		return func() {}
	}
	done := make(chan struct{})
	var mu sync.Mutex
	shown := false
	go func() {
		select {
		case <-done:
		case <-time.After(progressDelay):
			mu.Lock()
			fmt.Fprintf(f, "\r%s…", report.Escape(what))
			shown = true
			mu.Unlock()
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			mu.Lock()
			defer mu.Unlock()
			if shown {
				fmt.Fprint(f, "\r\x1b[K")
			}
		})
	}
}
