package makefile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A makefile that includes a FIFO: make waits for a writer until the deadline, and the error names the
// FIFO.
func TestRunMakeBlockedOnFIFO(t *testing.T) {
	needTools(t)
	if testing.Short() {
		t.Skip("waits out a 2 s deadline: skipped with -short")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("app: main.o\n\tcc -o $@ $^\n-include main.d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "main.d")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := RunMake(ctx, dir, filepath.Join(dir, "Makefile"))
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), fifo) {
		t.Fatalf("want a timeout naming %s, got %v", fifo, err)
	}
}
