package cargo

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stalecheck/stalecheck/internal/testutil/mutate"
)

// fingerprintSeeds are fingerprints as Cargo 1.95 writes them (a build-script run with
// rerun-if-changed and rerun-if-env-changed, a lib with dep-info, a precalculated registry unit),
// and shapes only encoding/json takes.
var fingerprintSeeds = []string{
	`{"rustc":7458672600737419911,"features":"[]","declared_features":"[\"fast\"]","target":2855758143759929317,"profile":2040997289075261528,"path":9459538316620963577,"deps":[[12036576295364117220,"build_script_build",false,15843501654783581607],[16491225453377939081,"libc",false,2694124695421129770]],"local":[{"CheckDepInfo":{"dep_info":"release/.fingerprint/kit-sys-66b404fa956a1de0/dep-lib-kit_sys","checksum":false}}],"rustflags":[],"config":8247474407144887393,"compile_kind":0}`,
	`{"rustc":1,"features":"","declared_features":"","target":0,"profile":0,"path":0,"deps":[[1,"kit_sys",false,2]],"local":[{"RerunIfChanged":{"output":"release/build/kit-sys-1/output","paths":["native/kit.c","native/kit.h"]}},{"RerunIfEnvChanged":{"var":"KIT_FAST","val":null}},{"RerunIfEnvChanged":{"var":"CC","val":"gcc"}}],"rustflags":["-C","target-cpu=native"],"config":0,"compile_kind":0}`,
	`{"rustc":18446744073709551615,"features":"[\"std\"]","declared_features":"[]","target":3,"profile":4,"path":5,"deps":[],"local":[{"Precalculated":"1.0.197"}],"rustflags":[],"config":6,"compile_kind":7}`,
	` { "rustc" : 1 , "deps" : [ [ 1 , "a\u00e9\n\"b\\" , true , 2 ] ] , "local" : [ { "Future" : { "x" : [1.5e3, -0, null, {"y": "z"}] } } ] , "extra" : {"a":[true,false]} } `,
	`{"RUSTC":1,"deps":[],"local":[]}`,
	`{"rustc":1,"deps":[],"local":[{"CheckDepInfo":{"DEP_INFO":"x"}}]}`,
	`{"rustc":1,"deps":[],"local":[{"CheckDepInfo":{"dep_info":"x"},"Precalculated":"y"}]}`,
	`{"rustc":1,"deps":[],"local":[{"Precalculated":"a"},{"Precalculated":"b"}]}{"trailing":1}`,
	`{"rustc":"12","deps":null,"local":null,"rustflags":null,"features":null}`,
	`{"rustc":1.0,"deps":[[1,"a",false]],"local":[]}`,
	`{"rustc":-1}`,
	`{"rustc":01}`,
	`{"features":"x"}`,
	`{"rustc":1,"deps":[[1,"\ud83d\ude00",false,2]],"local":[{"RerunIfEnvChanged":{"var":"A","val":"1","val":null}}]}`,
	`{"rustc":1,"deps":[[1,"\ud83d",false,2]]}`,
	`[1,2]`,
	``,
	`{"rustc":1,"deps":[],"local":[],"rustflags":["a"],"rustflags":[]}`,
}

// ParseFingerprint (the fast decoder, or encoding/json where it declines) gives exactly what
// encoding/json gives: every seed, and 20,000 mutations of them.
func TestParseFingerprintFastMatchesSlow(t *testing.T) {
	fastTaken := 0
	check := func(doc string) {
		t.Helper()
		want, wantErr := parseFingerprintSlow([]byte(doc))
		got, gotErr := ParseFingerprint([]byte(doc))
		if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
			t.Fatalf("%q: error %v, encoding/json's %v", doc, gotErr, wantErr)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("%q: differs from encoding/json's decode (-json +fast):\n%s", doc, d)
		}
		if _, err := parseFingerprintFast([]byte(doc)); err == nil {
			fastTaken++
		}
	}
	for _, s := range fingerprintSeeds {
		check(s)
	}
	// The premise: the fast decoder takes what Cargo writes.
	for _, s := range fingerprintSeeds[:4] {
		if _, err := parseFingerprintFast([]byte(s)); err != nil {
			t.Fatalf("the fast decoder declines %q", s)
		}
	}
	pieces := []string{" ", "\n", "null", "0", "-1", "1e2", "\"x\"", "\\u0041", "\\", "\"", ",", ":", "[", "]", "{", "}", "true", "RUSTC", "Val", "99999999999999999999"}
	for _, doc := range mutate.Strings(7, fingerprintSeeds, 20000, 3, pieces, "{}[]\",:0a \\") {
		check(doc)
	}
	// Nesting: within the fast decoder's depth, the same answer; past it and past encoding/json's own
	// limit (10,000), the slow decoder's error, and no stack growing with the input (a 10 MB file of
	// '[' is within the 64 MiB a record may hold).
	for _, n := range []int{maxFastDepth - 3, maxFastDepth, 10001, 2_000_000} {
		check(`{"rustc":1,"deps":[],"local":[],"u":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`)
		check(`{"rustc":1,"deps":[],"local":[{"Future":` + strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) + `}]}`)
	}
	if _, err := parseFingerprintFast([]byte(`{"rustc":1,"u":` + strings.Repeat("[", 10_000_000))); err == nil {
		t.Fatal("ten million open arrays: taken")
	}
	if fastTaken < 1000 {
		t.Fatalf("the fast decoder took only %d documents: the mutations say little about it", fastTaken)
	}
}

func FuzzParseFingerprintFast(f *testing.F) {
	for _, s := range fingerprintSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		fast, err := parseFingerprintFast([]byte(doc))
		if err != nil {
			return
		}
		slow, err := parseFingerprintSlow([]byte(doc))
		if err != nil {
			t.Fatalf("%q: the fast decoder takes it, encoding/json says %v", doc, err)
		}
		if d := cmp.Diff(slow, fast); d != "" {
			t.Fatalf("%q (-json +fast):\n%s", doc, d)
		}
	})
}

// BenchmarkParseFingerprintFast decodes the seeds Cargo writes (the first three), as a check does for
// every unit.
func BenchmarkParseFingerprintFast(b *testing.B) {
	docs := make([][]byte, 3)
	for i := range docs {
		docs[i] = []byte(fingerprintSeeds[i])
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			if _, err := parseFingerprintFast(d); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// A record with anything but white space after its object is damaged: an error, from either decoder.
func TestParseFingerprintTextAfter(t *testing.T) {
	for _, doc := range []string{`{"rustc":1} garbage {"rustc":1}`, `{"rustc":1}{"rustc":2}`, `{"rustc":1}]`} {
		if fp, err := ParseFingerprint([]byte(doc)); err == nil {
			t.Errorf("ParseFingerprint(%q) = %+v, want an error", doc, fp)
		}
	}
	if _, err := ParseFingerprint([]byte("{\"rustc\":1,\"deps\":[],\"local\":[]}\n \t\r\n")); err != nil {
		t.Errorf("a record ending in white space: %v", err)
	}
}

// Cargo writes rustc as a u64 and deps and local as arrays, always: a record without one of them (or
// with null, or a quoted number, which encoding/json would take) is damaged, and the error says which,
// in the format's words rather than the decoder's Go types.
func TestParseFingerprintRequiredFields(t *testing.T) {
	for doc, want := range map[string]string{
		`{"rustc":"123","deps":null,"local":null}`: "no deps (an array), local (an array)",
		`{"local":[]}`:                                                                  "no rustc (a number), deps (an array)",
		`{"rustc":"123","deps":[],"local":[]}`:                                          `field rustc is "123", not an unsigned 64-bit number`,
		`{"rustc":1.5,"deps":[],"local":[]}`:                                            "field rustc is 1.5, not an unsigned 64-bit number",
		`{"rustc":1,"target":"abc","deps":[],"local":[]}`:                               `field target is "abc", not an unsigned 64-bit number`,
		`{"rustc":1,"target":99999999999999999999,"deps":[],"local":[]}`:                "past the largest unsigned 64-bit number",
		`{"rustc":1,"deps":[],"local":[{"CheckDepInfo":{"dep_info":5}}]}`:               "CheckDepInfo: field dep_info is a JSON number, not what Cargo writes there",
		`{"rustc":1,"deps":[],"local":[{"Precalculated":5}]}`:                           "Precalculated: the value is a JSON number",
		`{"rustc":1,"deps":[],"local":[{"RerunIfChanged":{"output":"x","paths":[1]}}]}`: "RerunIfChanged: field paths is a JSON number",
		`{"rustc":1,"deps":[],"local":[{"CheckDepInfo":null}]}`:                         "CheckDepInfo: null, where Cargo writes an object",
		`{"rustc":"x","rustc":1,"deps":[],"local":[]}`:                                  "field rustc appears twice",
		`{"rustc":1,"deps":[],"local":[],"RUSTC":5}`:                                    `field "RUSTC" is not one Cargo writes`,
		`{"rustc":1,"deps":[]}`:                                                         "no local (an array)",
		`{"rustc":1,"deps":null,"local":[]}`:                                            "no deps (an array)",
		`{"deps":[],"local":[]}`:                                                        "no rustc (a number)",
		`[1,2,3]`:                                                                       "the value is a JSON array, not what Cargo writes there (offset 1)",
		`{"rustc":1,"deps":{},"local":[]}`:                                              "field deps is a JSON object",
	} {
		_, err := ParseFingerprint([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFingerprint(%s) = %v, want an error saying %q", doc, err, want)
		} else if strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "struct") {
			t.Errorf("ParseFingerprint(%s): the error names the decoder's types: %v", doc, err)
		}
	}
	if _, err := ParseFingerprint([]byte(`{"rustc":1,"deps":[],"local":[]}`)); err != nil {
		t.Errorf("the smallest complete record: %v", err)
	}
}
