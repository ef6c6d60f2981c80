// Command ledgerfill writes a ledger of N run records for the `runs` benchmark (bench/run-all.sh), and
// prints the ledger's bytes per record:
//
//	go run ./bench/ledgerfill -ledger /tmp/l.db -n 10000 -builds 20 [-identity rec.json]
//
// The records are runs of -builds builds, interleaved (run i is of build i mod builds, as an A/B
// comparison records them), named after their build pair. Each build's identity is the one in
// -identity (a record as `stalecheck runs --format json` prints it: its identity object is taken),
// with the digest of its first source changed per build; without -identity, a synthetic identity of
// -sources sources, 3 binaries, 8 natives, 3 tools and 12 environment variables.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/ledger"
)

func main() {
	dsn := flag.String("ledger", "", "the ledger to write (SQLite path or postgres:// URL)")
	n := flag.Int("n", 10000, "records to write")
	builds := flag.Int("builds", 20, "distinct builds among them")
	sources := flag.Int("sources", 400, "sources of the synthetic identity")
	identity := flag.String("identity", "", "a JSON record whose identity to use")
	flag.Parse()
	if *dsn == "" || *n <= 0 || *builds <= 0 {
		fmt.Fprintln(os.Stderr, "usage: ledgerfill -ledger DSN [-n N] [-builds B] [-identity FILE]")
		os.Exit(2)
	}
	base := synthetic(*sources)
	if *identity != "" {
		data, err := os.ReadFile(*identity)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		var rec struct {
			Identity ledger.Identity `json:"identity"`
		}
		if err := json.Unmarshal(data, &rec); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", *identity, err)
			os.Exit(2)
		}
		base = rec.Identity
	}
	ctx := context.Background()
	l, err := ledger.Open(ctx, *dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer l.Close()
	ids := make([]ledger.Identity, *builds)
	for b := range ids {
		id := base
		id.Sources = append([]ledger.Source(nil), base.Sources...)
		if len(id.Sources) > 0 {
			id.Sources[0].Digest = fmt.Sprintf("blake3:%064x", b+1)
		}
		ids[b] = id
	}
	recs := make([]ledger.Record, 0, 1000)
	start := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	flush := func() {
		if _, err := l.Import(ctx, recs); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		recs = recs[:0]
	}
	for i := 0; i < *n; i++ {
		b := i % *builds
		recs = append(recs, ledger.Record{
			Name: fmt.Sprintf("bench-%d", b/2), Start: start.Add(time.Duration(i) * time.Second),
			WallNS: int64(1e9 + i*1000), UserNS: 9e8, SysNS: 1e8, PeakRSSBytes: 50 << 20, RSSFloorBytes: 4 << 20,
			Command: []string{"./target/release/app", "--iterations", "1000"}, WorkDir: "/home/perf/ws",
			Identity: ids[b],
		})
		if len(recs) == cap(recs) {
			flush()
		}
	}
	if len(recs) > 0 {
		flush()
	}
	if !ledger.IsPostgres(*dsn) {
		l.Close()
		var size int64
		for _, s := range []string{"", "-wal"} {
			if st, err := os.Stat(*dsn + s); err == nil {
				size += st.Size()
			}
		}
		fmt.Printf("records=%d builds=%d bytes=%d bytes_per_record=%d\n", *n, *builds, size, size/int64(*n))
	}
}

// synthetic is an identity shaped like a real workspace's: paths under one root, BLAKE3 digests.
func synthetic(sources int) ledger.Identity {
	h := func(i int) string { return fmt.Sprintf("blake3:%064x", i*7919+13) }
	id := ledger.Identity{Toolchain: map[string]string{"rustc": "rustc 1.95.0 (aaaaaaaaa 2026-04-01)", "cargo": "cargo 1.95.0 (bbbbbbbbb 2026-03-20)", "cc": "cc (Debian 12.2.0-14) 12.2.0"},
		Env: map[string]string{}}
	for i := 0; i < 3; i++ {
		id.Binaries = append(id.Binaries, ledger.Binary{Path: fmt.Sprintf("/home/perf/ws/target/release/bin%d", i), Size: 50 << 20, Digest: h(i), BuildID: strings.Repeat("ab", 20)})
	}
	for i := 0; i < 8; i++ {
		id.Natives = append(id.Natives, ledger.Native{Library: fmt.Sprintf("libn%d.a", i), Path: fmt.Sprintf("/home/perf/ws/target/release/build/n%d-0123456789abcdef/out/libn%d.a", i, i),
			Fingerprint: h(100 + i), Config: ledger.NativeConfig{Features: []string{"default"}, Settings: map[string]string{"profile": "release"}}})
	}
	for i := 0; i < sources; i++ {
		id.Sources = append(id.Sources, ledger.Source{Path: fmt.Sprintf("/home/perf/ws/crates/c%02d/src/module_%03d.rs", i%20, i), Digest: h(1000 + i)})
	}
	for i := 0; i < 12; i++ {
		id.Env[fmt.Sprintf("VAR_%d", i)] = fmt.Sprintf("value-%d", i)
	}
	return id
}
