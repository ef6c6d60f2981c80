package graph

import (
	"strings"
	"testing"
)

// A value past EnvValueKept is kept cut with its digest and length: the kept form compares equal to the
// whole value and unequal to one that differs only past the cut; messages quote at most envShown bytes.
func TestEnvReadKept(t *testing.T) {
	big := strings.Repeat("x", 3*EnvValueKept) + "A"
	other := strings.Repeat("x", 3*EnvValueKept) + "B"
	whole := EnvRead{Name: "V", Value: big, Set: true}
	kept := whole.Kept()
	if kept.Digest == "" || kept.Len != len(big) || len(kept.Value) != EnvValueKept {
		t.Fatalf("Kept() = digest %q, len %d, %d bytes of value; want a digest, %d, %d", kept.Digest, kept.Len, len(kept.Value), len(big), EnvValueKept)
	}
	for _, c := range []struct {
		a, b EnvRead
		same bool
	}{
		{kept, whole, true},
		{whole, kept, true},
		{kept, kept, true},
		{kept, EnvRead{Name: "V", Value: other, Set: true}, false},
		{kept, EnvRead{Name: "V", Value: other, Set: true}.Kept(), false},
		{kept, EnvRead{Name: "V"}, false},
		{EnvRead{Name: "V", Value: "a", Set: true}, EnvRead{Name: "V", Value: "a", Set: true}.Kept(), true},
		{EnvRead{Name: "V"}, EnvRead{Name: "V"}, true},
	} {
		if got := c.a.Same(c.b); got != c.same {
			t.Errorf("Same(%d bytes digest %q, %d bytes digest %q) = %v, want %v", len(c.a.Value), c.a.Digest, len(c.b.Value), c.b.Digest, got, c.same)
		}
	}
	for _, e := range []EnvRead{whole, kept} {
		txt := e.Text()
		if len(txt) > envShown+100 || !strings.Contains(txt, "12289 bytes") || !strings.Contains(txt, "blake3:") {
			t.Errorf("Text() of a %d-byte value = %q (%d bytes), want it cut, with the length and digest", len(big), txt, len(txt))
		}
	}
	if got := (EnvRead{Value: "-O2", Set: true}).Text(); got != `"-O2"` {
		t.Errorf("a short value: %s", got)
	}
	if got := (EnvRead{}).Text(); got != "unset" {
		t.Errorf("unset: %s", got)
	}
	// A cut in the middle of a multi-byte rune keeps valid UTF-8.
	r := EnvRead{Value: strings.Repeat("é", EnvValueKept), Set: true}.Kept()
	if !strings.HasPrefix(strings.Repeat("é", EnvValueKept), r.Value) || len(r.Value) < EnvValueKept-1 {
		t.Errorf("cut value of 2-byte runes: %d bytes, not a prefix of whole runes", len(r.Value))
	}
}

// A flags string past FlagsKept is kept by its end, from a token's start (the variable's own tokens are
// last), with the whole string's digest and length.
func TestFlagsSeenKept(t *testing.T) {
	short := FlagsSeen{Var: "CFLAGS", Names: []string{"CFLAGS"}, Value: "-O2 -DX"}
	if got := short.Kept(); got.Value != short.Value || got.Digest != "" {
		t.Errorf("a short string is kept whole: %+v", got)
	}
	long := FlagsSeen{Var: "CFLAGS", Names: []string{"CFLAGS"}, Value: "-ffunction-sections " + strings.Repeat("-DFILL=1 ", FlagsKept/9+10) + "-DMINE=7"}
	k := long.Kept()
	if k.Digest == "" || k.Len != len(long.Value) || len(k.Value) > FlagsKept || !strings.HasSuffix(k.Value, " -DMINE=7") || !strings.HasPrefix(k.Value, "-DFILL=1 ") {
		t.Errorf("Kept() of %d bytes: %d bytes kept, digest %q, len %d; starts %.20q, ends %q", len(long.Value), len(k.Value), k.Digest, k.Len, k.Value, k.Value[max(0, len(k.Value)-12):])
	}
	if k.Kept().Value != k.Value {
		t.Errorf("Kept() of a kept string changed it")
	}
	if q := Quoted(long.Value); len(q) > envShown+100 || !strings.Contains(q, "bytes") {
		t.Errorf("Quoted of %d bytes: %d bytes", len(long.Value), len(q))
	}
}
