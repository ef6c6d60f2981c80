// Package mutate makes inputs for tests that compare two parsers of one format: a fast one against
// the reference it must match. Mutations of real documents reach the corners (a cut escape, a stray
// separator, a doubled key) that hand-written cases miss.
package mutate

import "math/rand/v2"

// Strings returns n mutations of seeds, the same for the same seed: each is a seed picked at random
// with zero to maxEdits edits, an edit deleting a byte, inserting one of pieces or replacing a byte
// with one of the bytes of replace.
func Strings(seed uint64, seeds []string, n, maxEdits int, pieces []string, replace string) []string {
	rnd := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]string, 0, n)
	for range n {
		b := []byte(seeds[rnd.IntN(len(seeds))])
		for k := rnd.IntN(maxEdits + 1); k > 0; k-- {
			switch op := rnd.IntN(3); {
			case op == 0 && len(b) > 0:
				at := rnd.IntN(len(b))
				b = append(b[:at:at], b[at+1:]...)
			case op == 1 || len(b) == 0:
				at := rnd.IntN(len(b) + 1)
				b = append(b[:at:at], append([]byte(pieces[rnd.IntN(len(pieces))]), b[at:]...)...)
			default:
				b[rnd.IntN(len(b))] = replace[rnd.IntN(len(replace))]
			}
		}
		out = append(out, string(b))
	}
	return out
}
