package gocgo_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stalecheck/stalecheck/internal/gocgo"
)

// benchModule writes a module of n packages p000…; every 40th one uses cgo: it includes a header
// chain in include/ (outside its folder) and links c/libcalc.a. Package p<i> imports p<i-1> and
// p<i-2>, and cmd/app imports the last one, so -deps walks the whole module.
func benchModule(b *testing.B, n int) string {
	dir := b.TempDir()
	files := map[string]string{
		"go.mod":             "module example.com/bench\n\ngo 1.26\n",
		"include/api.h":      "#include \"api_impl.h\"\n#include <stdint.h>\n",
		"include/api_impl.h": "#define API_VALUE 1\n",
		"c/libcalc.a":        "!<arch>\n",
	}
	for i := 0; i < n; i++ {
		var imports, uses string
		for _, d := range []int{i - 1, i - 2} {
			if d >= 0 {
				imports += fmt.Sprintf("\t\"example.com/bench/p%03d\"\n", d)
				uses += fmt.Sprintf("\t_ = p%03d.V\n", d)
			}
		}
		src := fmt.Sprintf("package p%03d\n\n", i)
		if i%40 == 0 {
			src += "/*\n#cgo CFLAGS: -I${SRCDIR}/../include\n#cgo LDFLAGS: -L${SRCDIR}/../c -lcalc\n#include \"api.h\"\n*/\nimport \"C\"\n\n"
		}
		if imports != "" {
			src += "import (\n" + imports + ")\n\n"
		}
		src += "var V = 1\n\nfunc F() {\n" + uses + "}\n"
		files[fmt.Sprintf("p%03d/p.go", i)] = src
	}
	files["cmd/app/main.go"] = fmt.Sprintf("package main\n\nimport \"example.com/bench/p%03d\"\n\nfunc main() { p%03d.F() }\n", n-1, n-1)
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func benchEnv(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("go is not on PATH")
	}
	b.Setenv("GOCACHE", goCache)
	b.Setenv("GOTOOLCHAIN", "local")
	b.Setenv("GOPROXY", "off")
	b.Setenv("GOFLAGS", "-mod=readonly")
	b.Setenv("GOWORK", "off")
	b.Setenv("CGO_ENABLED", "1")
}

// BenchmarkGoList is the baseline: `go list -json -deps ./...` alone, all fields.
func BenchmarkGoList(b *testing.B) {
	benchEnv(b)
	dir := benchModule(b, 200)
	for b.Loop() {
		cmd := exec.Command("go", "list", "-json", "-deps", "./...")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
}

// BenchmarkGoListFields is go list with the field list Read asks for, alone.
func BenchmarkGoListFields(b *testing.B) {
	benchEnv(b)
	dir := benchModule(b, 200)
	for b.Loop() {
		cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Name,Dir,Standard,Module,Deps,Error,DepsErrors,GoFiles,CgoFiles,CFiles,CXXFiles,MFiles,HFiles,FFiles,SFiles,SwigFiles,SwigCXXFiles,SysoFiles,EmbedFiles,CgoCFLAGS,CgoCPPFLAGS,CgoCXXFLAGS,CgoFFLAGS,CgoLDFLAGS,CgoPkgConfig", "-deps", "./...")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
}

// BenchmarkRead is the reader: go list, the scan of every cgo package (declared inputs stat'ed,
// include chain followed, libraries resolved).
func BenchmarkRead(b *testing.B) {
	benchEnv(b)
	dir := benchModule(b, 200)
	for b.Loop() {
		m, err := gocgo.Read(context.Background(), dir, gocgo.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if p := m.Package("example.com/bench/p040"); p == nil || len(p.Discovered) != 3 {
			b.Fatalf("p040: %+v", p)
		}
	}
}
