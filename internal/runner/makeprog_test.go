package runner

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A Make program inside a Cargo workspace links the workspace's staticlib (repro turn3/02): run times it
// when it is fresh, whatever an unrelated workspace binary's state, and refuses it once the staticlib it
// links is stale.
func TestRunMakeProgramLinkingAStaticlib(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is required (CI installs it)")
	}
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":        "[workspace]\nmembers = [\"capi\", \"other\"]\nresolver = \"2\"\n",
		"capi/Cargo.toml":   "[package]\nname = \"capi\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[lib]\ncrate-type = [\"staticlib\"]\n",
		"capi/src/lib.rs":   "#[no_mangle] pub extern \"C\" fn capi_value() -> i32 { 7 }\n",
		"other/Cargo.toml":  "[package]\nname = \"other\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"other/src/main.rs": "fn main() { println!(\"other v1\"); }\n",
		"cprog/main.c":      "#include <stdio.h>\nint capi_value(void);\nint main(void) { printf(\"cprog capi=%d\\n\", capi_value()); return 0; }\n",
		"cprog/Makefile":    "cprog: main.o ../target/debug/libcapi.a\n\t$(CC) -o $@ main.o ../target/debug/libcapi.a -lpthread -ldl -lm\nmain.o: main.c\n\t$(CC) -MMD -c -o $@ main.c\n-include main.d\n",
	})
	p.Cargo("build")
	make := func() {
		t.Helper()
		if out, err := exec.Command("make", "-s", "-C", p.Path("cprog")).CombinedOutput(); err != nil {
			t.Fatalf("make: %v\n%s", err, out)
		}
	}
	make()
	state := t.TempDir()
	prepare := func() *Plan {
		t.Helper()
		plan, err := Prepare(context.Background(), Config{Dir: p.Dir, Command: []string{"./cprog/cprog"}, StateDir: state,
			Environ: append(os.Environ(), p.Env...)})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	prepare()
	p.Edit("other/src/main.rs", "v1", "v2") // unrelated, not rebuilt
	if plan := prepare(); plan.Stale() || len(plan.Matter) != 1 || plan.Matter[0] != p.Path("cprog/cprog") {
		t.Errorf("the fresh Make program: stale %v, matter %v (%s), blocking %v", plan.Stale(), plan.Matter, plan.MatterHow, plan.Blocking)
	}
	p.Edit("capi/src/lib.rs", "7", "8") // the staticlib it links, not rebuilt
	if plan := prepare(); !plan.Stale() {
		t.Errorf("the Make program links a stale staticlib: want a refusal, matter %v (%s)", plan.Matter, plan.MatterHow)
	}
}
