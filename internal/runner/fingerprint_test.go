package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
)

const kernelV1 = `#include <stdio.h>
extern int table[4];
int table[4] = {1, 2, 3, 4};
int native_run(int n) { int s = 0; for (int i = 0; i < n; i++) s += table[i & 3]; printf("msm %d\n", s); return s; }
`

// buildArchive compiles src, saved under the file name tmpName (nvcc names its temporary files after its
// process ID, and that name lands in the object's symbol table), into dir/libk.a, like a build script.
func buildArchive(t *testing.T, dir, tmpName, src string) string {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	c := filepath.Join(dir, tmpName)
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "k.o")
	lib := filepath.Join(dir, "libk.a")
	os.Remove(lib)
	for _, args := range [][]string{{"cc", "-c", "-O2", "-fPIC", c, "-o", obj}, {"ar", "crs", lib, obj}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	return lib
}

func TestRunFingerprintIgnoresRebuildNoise(t *testing.T) {
	dir := t.TempDir()
	a := buildArchive(t, filepath.Join(dir, "a"), "tmpxft_00001234_k.c", kernelV1)
	b := buildArchive(t, filepath.Join(dir, "b"), "tmpxft_00009876_k.c", kernelV1)
	da, _ := digest.HashFile(a)
	db, _ := digest.HashFile(b)
	if da == db {
		t.Fatal("the premise fails: the two archives have the same digest (the temporary file name should differ)")
	}
	fa, err := Fingerprint(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := Fingerprint(b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(fa, FingerprintPrefix) || len(fa) != len(FingerprintPrefix)+64 {
		t.Fatalf("fingerprint %q", fa)
	}
	if fa != fb {
		t.Errorf("identical code rebuilt under another temporary name: fingerprints differ: %s vs %s", fa, fb)
	}
	// A code edit and a string-literal edit each change it.
	for name, src := range map[string]string{
		"code":   strings.Replace(kernelV1, "s += table[i & 3]", "s += 2 * table[i & 3]", 1),
		"string": strings.Replace(kernelV1, `"msm %d\n"`, `"TIMING_V2 msm %d\n"`, 1),
		"data":   strings.Replace(kernelV1, "{1, 2, 3, 4}", "{1, 2, 3, 5}", 1),
	} {
		c := buildArchive(t, filepath.Join(dir, name), "tmpxft_00001234_k.c", src)
		fc, err := Fingerprint(c)
		if err != nil {
			t.Fatal(err)
		}
		if fc == fa {
			t.Errorf("%s edit: the fingerprint did not change", name)
		}
	}
	// A bare object is fingerprinted too; a file that is neither an archive nor ELF is an error.
	if _, err := Fingerprint(filepath.Join(dir, "a", "k.o")); err != nil {
		t.Errorf("object: %v", err)
	}
	txt := filepath.Join(dir, "notes.txt")
	os.WriteFile(txt, []byte("hello"), 0o644)
	if _, err := Fingerprint(txt); err == nil || !strings.Contains(err.Error(), txt) {
		t.Errorf("text file: %v", err)
	}
}

// An identical nvcc rebuild of the example's kernel, the way its build script compiles it, gives an
// archive whose digest changes (nvcc names temporary files after its process ID) and whose fingerprint
// does not; -DCUZK_TIMING (the timing feature) changes the fingerprint. Needs nvcc on PATH.
func TestRunFingerprintNvccRebuild(t *testing.T) {
	need.Tools(t, "nvcc")
	nvcc, _ := exec.LookPath("nvcc")
	pkg, _ := filepath.Abs(filepath.Join("..", "..", "examples", "seed-two-copies", "prover-sys"))
	build := func(out string, extra ...string) (string, string) {
		t.Helper()
		os.MkdirAll(out, 0o755)
		obj, lib := filepath.Join(out, "groth16_cuda.o"), filepath.Join(out, "libgroth16_cuda.a")
		os.Remove(lib)
		args := append([]string{"-c", "-O2", "-ccbin", "c++", "-allow-unsupported-compiler", "-Xcompiler", "-fPIC", "cuda/groth16_cuda.cu"}, extra...)
		for _, c := range [][]string{append([]string{nvcc}, append(args, "-o", obj)...), {"ar", "crs", lib, obj}} {
			cmd := exec.Command(c[0], c[1:]...)
			cmd.Dir = pkg
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", c, err, b)
			}
		}
		d, _ := digest.HashFile(lib)
		fp, err := Fingerprint(lib)
		if err != nil {
			t.Fatal(err)
		}
		return d.String(), fp
	}
	out := filepath.Join(t.TempDir(), "build", "prover-sys-1ee5", "out")
	d1, f1 := build(out)
	d2, f2 := build(out)
	t.Logf("same folder: digests %s / %s, fingerprints %s / %s", d1, d2, f1, f2)
	if d1 == d2 {
		t.Logf("note: this nvcc rebuilt a byte-identical archive")
	}
	if f1 != f2 {
		t.Errorf("an identical nvcc rebuild changed the fingerprint: %s → %s", f1, f2)
	}
	_, f3 := build(out, "-DCUZK_TIMING")
	if f3 == f1 {
		t.Errorf("-DCUZK_TIMING did not change the fingerprint")
	}
	_, f4 := build(filepath.Join(t.TempDir(), "other", "out"))
	t.Logf("another folder: fingerprint %s (same as the first: %v)", f4, f4 == f1)
}
