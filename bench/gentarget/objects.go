package gentarget

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Native objects. A C compiler is run a handful of times, on templates whose package id, configuration
// tag, source number and working folder are placeholders of fixed length; each package's objects are the
// template bytes with the placeholders replaced by values of the same length. So every archive member is
// a real ELF object with DWARF (DW_AT_comp_dir = the package root, padded with '/' to the placeholder's
// length, which path cleaning removes) that names the package's own native source, at the cost of five
// compiler runs in all.

const (
	idPH   = "PPPPPPPPPPPPPPPP" // 16 hex: the package id used in C symbol names
	cfgPH  = "VVVVVVVVVVVVVVVV" // 16 hex: the build-script run's hash (the -D configuration tag)
	unitPH = "unit_QQQ"         // cmake-style sources: unit_000 … unit_999
)

// nativeStems are the sources of a cc-rs style package, native/<stem>.c.
var nativeStems = []string{"kernel", "ops", "util"}

func cSource(stem string) string {
	return fmt.Sprintf(`/* %[1]s.c: part of this package's native library (stalecheck bench fixture). */
#ifndef SCG_CONFIG
#define SCG_CONFIG "default"
#endif
const char scg_%[2]s_%[1]s_config[] = SCG_CONFIG;
const char *scg_%[2]s_%[1]s_tag(void) { return "%[1]s build " SCG_CONFIG; }
int scg_%[2]s_%[1]s_add(int a, int b) { return a + b + (int)sizeof(scg_%[2]s_%[1]s_config); }
long scg_%[2]s_%[1]s_sum(const int *v, long n) {
	long s = 0;
	for (long i = 0; i < n; i++)
		s += v[i];
	return s;
}
`, stem, idPH)
}

// template is one compiled object with placeholders.
type template struct {
	data    []byte
	symbols []string
}

type objectSet struct {
	elf       bool
	cc        string // the compiler driver's path ("" without one)
	compDirPH string
	stems     map[string]*template // "kernel", "ops", "util", unitPH
	cgu       *template
}

// buildTemplates compiles the templates with cc in a placeholder folder at least minLen bytes long.
// With cc == "-" or no compiler found, members are plain bytes (not ELF) and ok is false.
func buildTemplates(cc string, minLen int) (*objectSet, error) {
	os_ := &objectSet{stems: map[string]*template{}}
	fake := func() *objectSet {
		for _, s := range append(append([]string(nil), nativeStems...), unitPH) {
			os_.stems[s] = &template{data: []byte("SCG-FAKE-OBJECT " + s + " " + idPH + " " + cfgPH + "\n"),
				symbols: []string{"scg_" + idPH + "_" + s + "_config", "scg_" + idPH + "_" + s + "_tag", "scg_" + idPH + "_" + s + "_add", "scg_" + idPH + "_" + s + "_sum"}}
		}
		os_.cgu = &template{data: []byte("SCG-FAKE-RCGU " + idPH + "\n")}
		return os_
	}
	if cc == "-" {
		return fake(), nil
	}
	if cc == "" {
		cc = "cc"
	}
	path, err := exec.LookPath(cc)
	if err != nil {
		return fake(), nil
	}
	base, err := os.MkdirTemp("", "scg-cc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(base)
	ph := base
	for len(ph) < minLen {
		n := minLen - len(ph)
		if n > 200 {
			n = 200
		}
		ph += "/" + strings.Repeat("p", n)
	}
	os_.compDirPH = ph
	if err := os.MkdirAll(filepath.Join(ph, "native", "src"), 0o755); err != nil {
		return nil, err
	}
	compile := func(rel, src string) (*template, error) {
		if err := os.WriteFile(filepath.Join(ph, rel), []byte(src), 0o644); err != nil {
			return nil, err
		}
		obj := filepath.Join(base, "t.o")
		cmd := exec.Command(path, "-g", "-O2", "-fPIC", `-DSCG_CONFIG="`+cfgPH+`"`, "-c", rel, "-o", obj)
		cmd.Dir = ph
		cmd.Env = append(os.Environ(), "PWD="+ph)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s %s: %v: %s", cc, rel, err, out)
		}
		data, err := os.ReadFile(obj)
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(data, []byte(ph)) {
			return nil, fmt.Errorf("%s %s: the object does not name its working folder; cannot place it", cc, rel)
		}
		f, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		syms, _ := f.Symbols()
		t := &template{data: data}
		for _, s := range syms {
			if elf.ST_BIND(s.Info) == elf.STB_GLOBAL && s.Section != elf.SHN_UNDEF {
				t.symbols = append(t.symbols, s.Name)
			}
		}
		return t, nil
	}
	for _, s := range nativeStems {
		t, err := compile(filepath.Join("native", s+".c"), cSource(s))
		if err != nil {
			return fake(), nil
		}
		os_.stems[s] = t
	}
	t, err := compile(filepath.Join("native", "src", unitPH+".c"), cSource(unitPH))
	if err != nil {
		return fake(), nil
	}
	os_.stems[unitPH] = t
	t, err = compile("cgu.c", "int scg_"+idPH+"_rcgu(void) { return 0; }\n")
	if err != nil {
		return fake(), nil
	}
	os_.cgu = t
	os_.elf = true
	os_.cc = path
	return os_, nil
}

// object returns the template's bytes for a package root, id and configuration tag (and, for the
// cmake template, the source number), with its global symbols.
func (o *objectSet) object(t *template, root, id, cfg, unit string) ([]byte, []string) {
	reps := [][2]string{{idPH, id}, {cfgPH, cfg}}
	if unit != "" {
		reps = append(reps, [2]string{unitPH, unit})
	}
	data := t.data
	if o.compDirPH != "" && len(root) <= len(o.compDirPH) {
		data = bytes.ReplaceAll(data, []byte(o.compDirPH), []byte(root+strings.Repeat("/", len(o.compDirPH)-len(root))))
	} else {
		data = append([]byte(nil), data...)
	}
	for _, r := range reps {
		data = bytes.ReplaceAll(data, []byte(r[0]), []byte(r[1]))
	}
	syms := make([]string, len(t.symbols))
	for i, s := range t.symbols {
		for _, r := range reps {
			s = strings.ReplaceAll(s, r[0], r[1])
		}
		syms[i] = s
	}
	return data, syms
}
