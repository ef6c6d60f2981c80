package explain_test

import (
	"bytes"
	"errors"
	"github.com/stalecheck/stalecheck/internal/testutil/special"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/explain"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// The text of a path explanation: RFC 3339 times with nanoseconds, the §11.5 citation with its document
// first; a path nothing names and that does not exist is an error ("no such file").
func TestPathTextAndMissingFile(t *testing.T) {
	p := sysProject(t, "cargo:rerun-if-changed=build.rs")
	p.Cargo("build", "--release")
	p.Write("seed-sys/cuda/groth16.c", kernelV2)
	g := readGraph(t, p)
	r, err := explain.Path(g, "seed-sys/cuda/groth16.c", explain.Options{Cwd: p.Dir})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := explain.WritePathText(&b, g, r); err != nil {
		t.Fatal(err)
	}
	stamp := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z`
	for _, re := range []string{
		`^stalecheck explain \S+/seed-sys/cuda/groth16\.c: modified ` + stamp + `, \d+ bytes\n`,
		`\n  last run:  ` + stamp + ` \(target/release/build/seed-sys(?:-[0-9a-f]+/output|/[0-9a-f]+/run/stdout)\)\n`,
		`\n  why \(undeclared, docs/cargo-target-dir\.md §11\.5 case 1\): `,
	} {
		if !regexp.MustCompile(re).MatchString(b.String()) {
			t.Errorf("path text does not match %s:\n%s", re, b.String())
		}
	}
	if strings.Contains(b.String(), "§11.5 case 1 of") || regexp.MustCompile(`\d \d\d:\d\d:\d\d`).MatchString(b.String()) {
		t.Errorf("old citation or time format:\n%s", b.String())
	}

	for _, arg := range []string{"seed-sys/cuda/nosuch.c", p.Path("nosuch/x.c")} {
		_, err := explain.Path(g, arg, explain.Options{Cwd: p.Dir})
		var pe *fs.PathError
		if err == nil || !strings.Contains(err.Error(), "no such file") || !errors.As(err, &pe) {
			t.Errorf("explain %s: %v; want a no such file error", arg, err)
		}
	}
}

// Records explain reads itself (fingerprint JSON, dep-info, a run's output) replaced by a FIFO or a
// /dev/zero symlink after the graph was read: explain answers at once, the records unreadable.
func TestSpecialRecordFiles(t *testing.T) {
	p := sysProject(t, "cargo:rerun-if-changed=build.rs")
	p.Cargo("build", "--release")
	p.Cargo("build", "--release", "--features", "timing") // the first configuration's units are not live
	for _, kind := range []string{"fifo", "devzero"} {
		t.Run(kind, func(t *testing.T) {
			g := readGraph(t, p)
			var planted []string
			for _, s := range g.Steps {
				if s.Package != "seed-sys" {
					continue
				}
				switch {
				case s.Kind == graph.ScriptRun && !s.Live() && s.Reference.Exists:
					planted = append(planted, s.Reference.Path)
				case s.Kind == graph.Compile:
					planted = append(planted, filepath.Join(unit.Of(s).FingerprintDir, unit.Of(s).Target+".json"),
						filepath.Join(unit.Of(s).FingerprintDir, "dep-"+unit.Of(s).Target))
				}
			}
			if len(planted) < 3 {
				t.Fatalf("planted %v", planted)
			}
			saved := map[string][]byte{}
			for _, f := range planted {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				saved[f] = b
				special.Plant(t, f, kind)
			}
			defer func() {
				for f, b := range saved {
					os.Remove(f)
					os.WriteFile(f, b, 0o644)
				}
			}()
			special.Within(t, 15*time.Second, "explain with special files", func() {
				r, err := explain.Package(g, "seed-sys", explain.Options{})
				if err != nil {
					t.Errorf("explain seed-sys: %v", err)
					return
				}
				unreadable := 0
				for _, ro := range r.Roles {
					for _, v := range ro.Variants {
						for _, f := range v.Fields {
							if f.Name == "fingerprint" && f.Value == "unreadable" {
								unreadable++
							}
						}
					}
				}
				if unreadable == 0 {
					t.Errorf("no unit's fingerprint is unreadable: %+v", r.Roles)
				}
				if _, err := explain.Path(g, "seed-sys/cuda/groth16.c", explain.Options{Cwd: p.Dir}); err != nil {
					t.Errorf("explain path: %v", err)
				}
			})
		})
	}
}

// An argument that cannot be a package name (main.c) is a path, also when no such file exists.
func TestIsPath(t *testing.T) {
	dir := t.TempDir()
	for arg, want := range map[string]bool{"nosuch.c": true, "a/b": true, "seed-sys": false, "seed_sys@0.1.0": false, "twover@0.2.0": false, "x+y": true} {
		if got := explain.IsPath(arg, dir); got != want {
			t.Errorf("IsPath(%q) = %v, want %v", arg, got, want)
		}
	}
}
