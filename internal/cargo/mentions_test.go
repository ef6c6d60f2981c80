package cargo

import (
	"math/rand/v2"
	"testing"
)

// TestTextWordsAgreeWithScan: the word index rules out only names the text does not mention as whole
// words, for names and texts made of name bytes, separators and quotes in every arrangement.
func TestTextWordsAgreeWithScan(t *testing.T) {
	alphabet := []byte(`ab.-_/" I`)
	rnd := rand.New(rand.NewPCG(1, 2))
	gen := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		return string(b)
	}
	fixed := []struct{ text, name string }{
		{`cc::Build::new().file("native/kit.c")`, "native/kit.c"},
		{`cc::Build::new().file("native/kit.c")`, `"kit.c"`},
		{`cc::Build::new().file("native/kit.c")`, "kit"},
		{`include_str!("data/table.txt")`, `"table.txt"`},
		{`.include("native/include")`, "-Inative/include"},
		{"", "a"},
		{"a", ""},
	}
	for _, c := range fixed {
		if got, want := newTextWords([]byte(c.text)).mentions(c.name), mentionAt(c.text, c.name) >= 0; got != want {
			t.Errorf("mentions(%q, %q) = %v, the scan says %v", c.text, c.name, got, want)
		}
	}
	found := 0
	for i := 0; i < 20000; i++ {
		text, name := gen(rnd.IntN(40)), gen(1+rnd.IntN(6))
		got, want := newTextWords([]byte(text)).mentions(name), mentionAt(text, name) >= 0
		if got != want {
			t.Fatalf("mentions(%q, %q) = %v, the scan says %v", text, name, got, want)
		}
		if want {
			found++
		}
	}
	// The premise: the random cases include mentions, not only misses.
	if found < 100 {
		t.Fatalf("only %d of the random names were mentioned: the test says little", found)
	}
	if newTextWords(nil).mentions("a") {
		t.Error("a nil text mentions a name")
	}
}
