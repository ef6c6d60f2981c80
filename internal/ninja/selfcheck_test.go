package ninja

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// readBoth reads dir twice: with Read's own evaluation of ninja's rules, and asking ninja -n
// (AskNinja); it returns both.
func readBoth(t *testing.T, dir string) (self, asked *Build) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	self, err := Read(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	asked, err = Read(ctx, dir, Options{AskNinja: true})
	if err != nil || asked.DryRun == nil || asked.DryRun.Self {
		t.Fatalf("asking ninja: %v %+v", err, asked.DryRunErr)
	}
	return self, asked
}

func dirtyOutputs(b *Build, self bool) []string {
	var out []string
	for _, e := range b.Edges {
		if self && e.SelfDirty != "" || !self && e.WouldRun {
			out = append(out, firstOut(e))
		}
	}
	sort.Strings(out)
	return out
}

// TestSelfCheckAgreesWithNinja: on a real ninja build (the generated CMake-shaped tree), the command
// hashes MurmurHash64A computes equal .ninja_log's; with nothing to do Read does not run ninja -n and
// says no work, as ninja does; after each kind of change (a header in the deps log, a command line, a
// removed output, a removed deps log) Read's own evaluation calls exactly the edges dirty that ninja's
// dry run runs, and then asks ninja.
func TestSelfCheckAgreesWithNinja(t *testing.T) {
	dir, _ := genTree(t, 3, 10)
	self, asked := readBoth(t, dir)
	for _, e := range self.Edges {
		le := self.Log.Entries[firstOut(e)]
		if le == nil || MurmurHash64A([]byte(e.Command)) != le.CommandHash {
			t.Fatalf("%s: hash %x, log %+v", firstOut(e), MurmurHash64A([]byte(e.Command)), le)
		}
	}
	if self.SelfCheck == nil || self.SelfCheck.Dirty != 0 || !self.DryRun.Self || !self.DryRun.NoWork || !asked.DryRun.NoWork {
		t.Fatalf("nothing to do: self %+v dry run %+v; ninja %+v", self.SelfCheck, self.DryRun, asked.DryRun)
	}
	agree := func(what string, want int) {
		t.Helper()
		self, asked := readBoth(t, dir)
		s, n := dirtyOutputs(self, true), dirtyOutputs(asked, false)
		if self.SelfCheck == nil || self.DryRun == nil || self.DryRun.Self || strings.Join(s, " ") != strings.Join(n, " ") || len(s) < want {
			t.Fatalf("%s: own evaluation %v (%+v), ninja -n %v", what, s, self.SelfCheck, n)
		}
		t.Logf("%s: %d edge(s) dirty, as ninja says (first: %s: %s)", what, len(s), s[0], self.ByOutput[s[0]].SelfDirty)
	}
	touchLater(t, filepath.Join(dir, "src/d001/d.h"), "\n")
	agree("header in the deps log", 10)

	// A command line change of one edge (its FLAGS).
	bn := filepath.Join(dir, "build.ninja")
	data, _ := os.ReadFile(bn)
	os.WriteFile(bn, []byte(strings.Replace(string(data), "FLAGS = -O2 -g", "FLAGS = -O3 -g", 1)), 0o644)
	agree("command line", 11)

	// A removed output, then the deps log.
	os.Remove(filepath.Join(dir, "CMakeFiles/d002.dir/f005.c.o"))
	agree("removed output", 12)
	os.Remove(filepath.Join(dir, ".ninja_deps"))
	agree("removed deps log", 30)
}
