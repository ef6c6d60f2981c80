package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The command line as users meet it, one testscript file per topic under testdata/script: exit codes,
// usage errors and what they say, and a check where nothing is built.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"stalecheck": main})
}

func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script"})
}
