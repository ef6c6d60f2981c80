package cli

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// check -p keeps the findings whose binaries a unit of the package builds or whose subjects lie in its
// folders, and names the packages there are for an unknown name.
func TestForPackages(t *testing.T) {
	app := &graph.Step{Package: "app", RecordDir: "/t/debug/.fingerprint/app-1"}
	sys := &graph.Step{Package: "ksys", Kind: graph.ScriptRun, ScriptData: &graph.ScriptDetails{RunDir: "/t/debug/build/ksys-2"}, PackageRoot: "/w/ksys"}
	g := &graph.Graph{Steps: []*graph.Step{app, sys}, Roots: []*graph.Root{{File: graph.FileInfo{Path: "/t/debug/app"}, Step: app}},
		BuildDirs: []*graph.BuildDir{{Path: "/t/debug/build/ksys-3", Package: "ksys"}}} // the script's compile folder
	fs := []check.Finding{
		{Rule: "a", Roots: []string{"/t/debug/app"}, Subjects: []string{"/w/ksys/c/k.c", "/t/debug/build/ksys-2"}},
		{Rule: "b", Roots: []string{"/t/debug/app"}, Subjects: []string{"/w/app/src/main.rs"}},
		{Rule: "c", Subjects: []string{"/t/debug/build/ksys-2/out/libk.a"}},
		{Rule: "d", Subjects: []string{"/t/debug/build/ksys-3"}},
	}
	rules := func(fs []check.Finding) string {
		var r []string
		for _, f := range fs {
			r = append(r, f.Rule)
		}
		return strings.Join(r, ",")
	}
	for pkgs, want := range map[string]string{"app": "a,b", "ksys": "a,c,d", "": "a,b,c,d"} {
		var p []string
		if pkgs != "" {
			p = []string{pkgs}
		}
		got, err := forPackages(g, fs, p)
		if err != nil || rules(got) != want {
			t.Errorf("-p %q: %s, %v; want %s", pkgs, rules(got), err, want)
		}
	}
	if _, err := forPackages(g, fs, []string{"nope"}); err == nil || !strings.Contains(err.Error(), "it has: app, ksys") {
		t.Errorf("-p nope: %v", err)
	}
}
