package cli

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
)

// A C program linked against the only copy of a Cargo staticlib (repro turn3/08): the linker drops the
// strings of the std code the program does not use and relaxes GOT loads (mov → lea), so verify must
// never say "does not hold" for the copy the program was linked from: it holds (0) or cannot tell (2).
func TestVerifyStaticlibInCProgram(t *testing.T) {
	need.Tools(t, "make", "cc")
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":      "[workspace]\nmembers = [\"capi\"]\nresolver = \"2\"\n",
		"capi/Cargo.toml": "[package]\nname = \"capi\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[lib]\ncrate-type = [\"staticlib\"]\n",
		"capi/src/lib.rs": "#[no_mangle] pub extern \"C\" fn capi_value() -> i32 { std::env::args().count() as i32 * 7 }\n",
		"cprog/main.c":    "#include <stdio.h>\nint capi_value(void);\nint main(void) { printf(\"cprog capi=%d\\n\", capi_value()); return 0; }\n",
		"cprog/Makefile":  "cprog: main.o ../target/debug/libcapi.a\n\t$(CC) -o $@ main.o ../target/debug/libcapi.a -lpthread -ldl -lm\nmain.o: main.c\n\t$(CC) -MMD -c -o $@ main.c\n-include main.d\n",
	})
	p.Cargo("build")
	if out, err := exec.Command("make", "-s", "-C", p.Path("cprog")).CombinedOutput(); err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	out, stderr, code := run(t, "verify", p.Path("cprog/cprog"), "--matches", p.Path("target/debug/libcapi.a"))
	if code == 1 || code != 0 && code != 2 {
		t.Fatalf("verify --matches the copy the program was linked from: exit %d\n%s%s", code, out, stderr)
	}
	if strings.Contains(out+stderr, "does not hold") {
		t.Errorf("verify says does not hold:\n%s%s", out, stderr)
	}
}
