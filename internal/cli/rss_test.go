package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// Repro 03: with --repeat the peak RSS of every run is the command's own, not stalecheck's grown
// resident set; the floor is recorded with each run and is in the JSON, with peak_rss_at_floor.
func TestRunRepeatPeakRSSIsTheCommands(t *testing.T) {
	runEnv(t)
	ws := builtProject(t)
	db := filepath.Join(t.TempDir(), "l.db")
	// Grow this process (stalecheck run runs in it): without a fresh child per run, every command's peak
	// would be at least this.
	ballast := make([]byte, 96<<20)
	for i := range ballast {
		if i%4096 == 0 {
			ballast[i] = 1
		}
	}
	if _, stderr, code := runIn(t, ws, "run", "--ledger", db, "-q", "--repeat", "4", "--", "target/release/app"); code != 0 {
		t.Fatalf("run --repeat 4: exit %d\n%s", code, stderr)
	}
	// A command that holds 64 MiB: its own peak, above the floor, on every repeat.
	if _, stderr, code := runIn(t, ws, "run", "--ledger", db, "-q", "--repeat", "2", "--name", "dd", "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1"); code != 0 {
		t.Fatalf("run dd: exit %d\n%s", code, stderr)
	}
	out, _, code := runIn(t, ws, "runs", "--ledger", db, "--format", "json")
	var doc struct {
		Records []struct {
			Name   string `json:"name"`
			Peak   int64  `json:"peak_rss_bytes"`
			Floor  int64  `json:"rss_floor_bytes"`
			AtFlor *bool  `json:"peak_rss_at_floor"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || len(doc.Records) != 6 {
		t.Fatalf("runs: exit %d, %v\n%s", code, err, out)
	}
	var floors []int64
	for _, r := range doc.Records {
		if r.Floor <= 0 || r.AtFlor == nil {
			t.Errorf("%s: floor %d, peak_rss_at_floor %v: want a recorded floor", r.Name, r.Floor, r.AtFlor)
			continue
		}
		floors = append(floors, r.Floor)
		switch r.Name {
		case "app":
			if r.Peak > 32<<20 || !*r.AtFlor {
				t.Errorf("app: peak RSS %d bytes (floor %d, at floor %v); want the small program's peak at the floor, far below this process's %d", r.Peak, r.Floor, *r.AtFlor, len(ballast))
			}
		case "dd":
			if r.Peak < 64<<20 || r.Peak > 64<<20+r.Floor+(8<<20) || *r.AtFlor {
				t.Errorf("dd: peak RSS %d bytes (floor %d, at floor %v); want about 64 MiB, above the floor", r.Peak, r.Floor, *r.AtFlor)
			}
		}
	}
	// The floor does not grow from run to run: each comes from a fresh process.
	for _, f := range floors {
		if f > floors[len(floors)-1]+(4<<20) || f > 32<<20 {
			t.Errorf("floors %v: want them all alike and small", floors)
			break
		}
	}
	out, _, _ = runIn(t, ws, "runs", "--ledger", db)
	if n := strings.Count(out, rssFloorMark); n != 4 || !strings.Contains(out, "recorded with each run") {
		t.Errorf("runs marks %d peaks at the floor, want the 4 of app:\n%s", n, out)
	}
	ballast[1] = 2
}
