package evidence

import "testing"

// An rlib bundling two archives of one build script (Debian's blake3, repro turn3/07) is narrowed, for
// each library, to the members of that library's archive, so the archive and the rlib are one content.
func TestBundledPartNarrowsRlibToTheArchivesMembers(t *testing.T) {
	ar := &Candidate{Path: "/t/out/libavx512.a", Members: []string{"avx512.o"},
		Features: []Feature{{Key: "code:avx512", Member: "avx512.o"}}}
	rlib := &Candidate{Path: "/t/deps/libblake3-0123.rlib", Members: []string{"avx512.o", "sse41.o"},
		Features: []Feature{{Key: "code:avx512", Member: "avx512.o"}, {Key: "code:sse41", Member: "sse41.o"}}}
	out := bundledPart([]*Candidate{ar, rlib})
	if out[0] != ar || len(out[1].Features) != 1 || out[1].Features[0].Key != "code:avx512" || len(out[1].Members) != 1 {
		t.Fatalf("narrowed rlib = %+v", out[1])
	}
	if len(rlib.Features) != 2 {
		t.Error("the candidate given was changed")
	}
	// An rlib sharing no member name with the archives keeps everything.
	other := &Candidate{Path: "/t/deps/libx-1.rlib", Members: []string{"x.o"}, Features: []Feature{{Key: "k", Member: "x.o"}}}
	if out := bundledPart([]*Candidate{ar, other}); out[1] != other {
		t.Error("an rlib with none of the archive's members was narrowed")
	}
}
