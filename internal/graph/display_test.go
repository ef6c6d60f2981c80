package graph

import "testing"

func TestDisplay(t *testing.T) {
	cargo := &Graph{Workspace: "/ws", TargetDir: "/elsewhere/target", BuildDir: "/elsewhere/target"}
	make_ := &Graph{Workspace: "/home/u/proj", BuildDir: "/home/u/proj"}
	atRoot := &Graph{Workspace: "/w", BuildDir: "/w"}
	for _, c := range []struct {
		g    *Graph
		p    string
		want string
	}{
		{cargo, "/ws/src/lib.rs", "src/lib.rs"},
		{cargo, "/elsewhere/target/release/app", "target/release/app"}, // the target folder's parent
		{cargo, "/usr/include/stdio.h", "/usr/include/stdio.h"},
		{make_, "/home/u/proj/main.c", "main.c"},
		{make_, "/home/u/other/x.h", "/home/u/other/x.h"}, // not the workspace's parent
		{atRoot, "/usr/bin/cc", "/usr/bin/cc"},            // "/" is no base
		{atRoot, "/w/..hidden", "..hidden"},
		{nil, "/a/b", "/a/b"},
	} {
		if got := c.g.Display(c.p); got != c.want {
			t.Errorf("Display(%q) in %+v = %q, want %q", c.p, c.g, got, c.want)
		}
	}
}
