package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stalecheck/stalecheck/internal/binfmt"
)

// Compilers says which compilers made a binary, from its bytes: the .comment strings the linker
// gathered from every object ("GCC: (Debian 12.2.0-14) 12.2.0", "rustc version 1.95.0 …", "clang
// version …"), the producers of its DWARF compile units when it has debug information (GCC records its
// flags there: "GNU C17 12.2.0 -O2 -fPIC"), and the code versions and architectures of its CUDA
// fatbinary entries. What is merely on PATH is not a compiler of the binary. Keys: "rustc", "cc" (the
// C and C++ compilers of .comment), "cc producers" (DWARF, with flags), "cuda device code". A file that
// is not ELF gives nothing.
func Compilers(path string) (map[string]string, error) {
	f, err := binfmt.OpenELF(path)
	if err != nil {
		if !hasMagic(path, "\x7fELF") {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	comments, err := f.Comment()
	if err != nil {
		return nil, err
	}
	var cc []string
	for _, c := range comments {
		switch {
		case strings.HasPrefix(c, "rustc version "):
			out["rustc"] = "rustc " + strings.TrimPrefix(c, "rustc version ") // as `rustc -V` says it
		case strings.HasPrefix(c, "GCC: "), strings.Contains(c, "clang version "):
			cc = append(cc, c)
		}
	}
	if len(cc) > 0 {
		out["cc"] = strings.Join(dedupe(cc), "; ")
	}
	if f.Section(".debug_info") != nil {
		cus, err := f.CompileUnits()
		if err == nil {
			var prods []string
			for _, cu := range cus {
				// rustc's units name LLVM through rustc; the .comment line already says which rustc.
				if cu.Producer != "" && !strings.Contains(cu.Producer, "rustc version") {
					prods = append(prods, cu.Producer)
				}
			}
			if ps := dedupe(prods); len(ps) > 0 {
				if len(ps) > 6 {
					ps = append(ps[:6], fmt.Sprintf("and %d more", len(ps)-6))
				}
				out["cc producers"] = strings.Join(ps, "; ")
			}
		}
	}
	if fb, err := f.Fatbins(&binfmt.FatbinOptions{NoDigest: true}); err == nil {
		var codes []string
		for _, s := range []*binfmt.FatbinSection{fb.NvFatbin, fb.RelFatbin} {
			if s == nil {
				continue
			}
			for _, c := range s.Containers {
				for _, e := range c.Entries {
					kind := e.Kind.String()
					if e.Kind == binfmt.FatbinCubin {
						kind = "cubin"
					}
					codes = append(codes, fmt.Sprintf("%s sm_%d %d.%d", kind, e.Arch, e.Major, e.Minor))
				}
			}
		}
		if cs := dedupe(codes); len(cs) > 0 {
			out["cuda device code"] = strings.Join(cs, ", ")
		}
	}
	return out, nil
}

// dedupe returns xs sorted, each value once.
func dedupe(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}
