package ledger

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Failpoints let reliability tests stop the ledger at a chosen point. When the environment variable
// STALECHECK_FAILPOINT names a failpoint, reaching it writes the process ID to the file named by
// STALECHECK_FAILPOINT_MARKER (when set) and blocks until the context ends or a minute passes, then
// fails. Failpoints:
//
//	ledger-insert-mid   in Insert, inside the transaction, after the records, args and binaries rows
const (
	failpointEnv       = "STALECHECK_FAILPOINT"
	failpointMarkerEnv = "STALECHECK_FAILPOINT_MARKER"
	failpointBlock     = time.Minute
)

func failpoint(ctx context.Context, name string) error {
	if os.Getenv(failpointEnv) != name {
		return nil
	}
	if m := os.Getenv(failpointMarkerEnv); m != "" {
		if err := os.WriteFile(m, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			return fmt.Errorf("failpoint %s: %w", name, err)
		}
	}
	t := time.NewTimer(failpointBlock)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("failpoint %s: %w", name, ctx.Err())
	case <-t.C:
		return fmt.Errorf("failpoint %s reached", name)
	}
}
