package cargo

import (
	"debug/elf"

	"github.com/stalecheck/stalecheck/internal/binfmt"
)

type cuSources struct {
	member string
	files  []string
	// units are the compile units one by one: the main source (absolute) and its line-table files.
	units []cuUnit
}

type cuUnit struct {
	source string
	files  []string
}

// memberInfo is what an archive member tells about the source it was compiled from.
type memberInfo struct {
	name string
	// cuda is true when the object carries a CUDA fatbinary section (.nv_fatbin, __nv_relfatbin), i.e.
	// nvcc compiled it from a .cu file.
	cuda bool
}

// archiveEvidence lists an archive's members and, for ELF members that carry DWARF, the source files
// of their compile units (CU name and line-table files). Members that are not ELF (lib.rmeta) or carry
// no DWARF contribute only their names.
func archiveEvidence(path string) (members []memberInfo, cus []cuSources, err error) {
	a, err := binfmt.OpenArchive(path)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range a.Members {
		mi := memberInfo{name: m.Name}
		if m.Size > 256<<20 {
			members = append(members, mi)
			continue
		}
		sr, closer, err := a.Open(m)
		if err != nil {
			members = append(members, mi)
			continue
		}
		if ef, err := elf.NewFile(sr); err == nil {
			mi.cuda = ef.Section(".nv_fatbin") != nil || ef.Section("__nv_relfatbin") != nil
		}
		members = append(members, mi)
		units, err := binfmt.CompileUnits(sr)
		closer.Close()
		if err != nil || len(units) == 0 {
			continue
		}
		c := cuSources{member: m.Name}
		for _, u := range units {
			if u.Name != "" {
				c.files = append(c.files, absJoin(u.CompDir, u.Name))
				c.units = append(c.units, cuUnit{source: absJoin(u.CompDir, u.Name), files: u.Files})
			}
			c.files = append(c.files, u.Files...)
		}
		cus = append(cus, c)
	}
	return members, cus, nil
}

// sameLanguage reports whether an object could have been compiled from a source with this extension:
// an object with a CUDA fatbinary comes from .cu; one without comes from anything but .cu.
func (m memberInfo) sameLanguage(ext string) bool {
	return m.cuda == (ext == ".cu")
}

func absJoin(dir, name string) string {
	if len(name) > 0 && name[0] == '/' || dir == "" {
		return name
	}
	return dir + "/" + name
}
