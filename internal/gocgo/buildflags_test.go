package gocgo

import "testing"

// TestBuildFlags: the fix passes the flags the build info records, quoted for the shell; the defaults
// (exe, false) and the environment's settings are left out.
func TestBuildFlags(t *testing.T) {
	b := &Binary{Settings: []Setting{{"-buildmode", "exe"}, {"-compiler", "gc"}, {"-tags", "fast,net"},
		{"-trimpath", "true"}, {"-ldflags", "-X main.ver=9 -s"}, {"-race", "false"}, {"CGO_ENABLED", "1"}, {"GOOS", "linux"}}}
	if got, want := buildFlags(b), ` -tags=fast,net -trimpath -ldflags='-X main.ver=9 -s'`; got != want {
		t.Errorf("buildFlags: %q, want %q", got, want)
	}
	if got := shellWord("it's"); got != `'it'\''s'` {
		t.Errorf("shellWord: %q", got)
	}
}
