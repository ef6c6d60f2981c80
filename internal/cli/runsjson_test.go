package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/runner"
)

// runs --format json prints each build identity once (identities, keyed by the ledger's identity key)
// and each record names its identity by key, with its own git; the whole document imports into another
// ledger as the same records (a second import skips them all); a record cut out of the document alone,
// and a document whose identity was edited, are errors naming the record.
func TestRunsJSONSharedIdentities(t *testing.T) {
	runEnv(t)
	for name, newDSN := range testLedgers(t) {
		t.Run(name, func(t *testing.T) {
			dsn := newDSN(t)
			l := openTestLedger(t, dsn)
			ctx := context.Background()
			for i := 0; i < 6; i++ {
				r := pruneRecord("shared", 6-i, []string{"a", "b"}[i%2], false)
				r.Identity.Sources = []ledger.Source{{Path: "/w/src/lib.rs", Digest: "blake3:" + strings.Repeat("c", 64)}}
				r.Identity.Git = ledger.Git{Head: strings.Repeat("d", 40), Dirty: i == 3}
				if _, err := l.Insert(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			want := listRecords(t, dsn)
			out, stderr, code := run(t, "runs", "--ledger", dsn, "--format", "json")
			if code != 0 {
				t.Fatalf("runs --format json: exit %d\n%s", code, stderr)
			}
			var raw struct {
				Identities map[string]map[string]json.RawMessage `json:"identities"`
				Records    []map[string]json.RawMessage          `json:"records"`
			}
			if err := json.Unmarshal([]byte(out), &raw); err != nil {
				t.Fatal(err)
			}
			if len(raw.Identities) != 2 || len(raw.Records) != 6 {
				t.Fatalf("%d identities and %d records, want 2 and 6\n%s", len(raw.Identities), len(raw.Records), out)
			}
			for k, id := range raw.Identities {
				if _, ok := id["git"]; ok || !strings.HasPrefix(k, "sha256:") {
					t.Errorf("identity %s: %s (want a sha256: key and no git)", k, out)
				}
			}
			for _, r := range raw.Records {
				if _, ok := r["identity"]; ok || r["identity_key"] == nil || r["git"] == nil {
					t.Errorf("record %s: want identity_key and git, no identity", r["id"])
				}
			}
			var doc RunsDoc
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if err := doc.resolve(); err != nil {
				t.Fatal(err)
			}
			for i, r := range doc.Records {
				w := want[i]
				if r.ID != w.ID || r.IdentityKey != w.Identity.Key || r.Build != runner.BuildKey(w.Identity) || !ledger.SameRun(&r.Record, &w) ||
					r.Record.Identity.Git != w.Identity.Git {
					t.Errorf("record %d: %+v\nwant %+v", i, r.Record, w)
				}
			}

			// The whole document into a fresh ledger: the same runs, identities and git.
			file := filepath.Join(t.TempDir(), "runs.json")
			os.WriteFile(file, []byte(out), 0o644)
			dsn2 := newDSN(t)
			openTestLedger(t, dsn2)
			out2, stderr, code := run(t, "runs", "--ledger", dsn2, "--import", file, "--format", "json")
			var imp ImportDoc
			if err := json.Unmarshal([]byte(out2), &imp); code != 0 || err != nil || imp.Imported != 6 || imp.Skipped != 0 {
				t.Fatalf("import of the runs document: exit %d, %v\n%s%s", code, err, out2, stderr)
			}
			got := listRecords(t, dsn2)
			if len(got) != 6 {
				t.Fatalf("%d records imported", len(got))
			}
			for i := range got {
				// The document lists the newest first and import keeps the file's order, so the newest
				// record got the first new ID: the lists are reversed.
				w := want[len(want)-1-i]
				g := got[i]
				if !ledger.SameRun(&g, &w) || g.Identity.Key != w.Identity.Key || g.Identity.Git != w.Identity.Git || !g.Start.Equal(w.Start) {
					t.Errorf("imported %+v\nwant %+v", g, w)
				}
			}
			if _, _, code := run(t, "runs", "--ledger", dsn2, "--import", file); code != 0 || len(listRecords(t, dsn2)) != 6 {
				t.Errorf("second import: exit %d, %d records", code, len(listRecords(t, dsn2)))
			}

			// A record of the document alone, and a document with an edited identity.
			alone := filepath.Join(t.TempDir(), "alone.json")
			rec, _ := json.Marshal(raw.Records[0])
			os.WriteFile(alone, rec, 0o644)
			edited := filepath.Join(t.TempDir(), "edited.json")
			os.WriteFile(edited, []byte(strings.Replace(out, strings.Repeat("c", 64), strings.Repeat("e", 64), 1)), 0o644)
			for p, msg := range map[string]string{
				alone:  "record 1 (line 1): identity_key",
				edited: "is not the key of the identity the document holds under it",
			} {
				if _, stderr, code := run(t, "runs", "--ledger", dsn2, "--import", p); code != 2 || !strings.Contains(stderr, msg) {
					t.Errorf("import %s: exit %d, stderr %q; want 2 and %q", p, code, stderr, msg)
				}
			}
			if n := len(listRecords(t, dsn2)); n != 6 {
				t.Errorf("%d records after the refused imports, want 6", n)
			}
		})
	}
}
