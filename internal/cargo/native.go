package cargo

import (
	"github.com/stalecheck/stalecheck/internal/binfmt"
)

type cuSources struct {
	member string
	files  []string
}

// archiveEvidence lists an archive's members and, for ELF members that carry DWARF, the source files
// of their compile units (CU name and line-table files). Members that are not ELF (lib.rmeta) or carry
// no DWARF contribute only their names.
func archiveEvidence(path string) (members []string, cus []cuSources, err error) {
	a, err := binfmt.OpenArchive(path)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range a.Members {
		members = append(members, m.Name)
		if m.Size > 256<<20 {
			continue
		}
		sr, closer, err := a.Open(m)
		if err != nil {
			continue
		}
		units, err := binfmt.CompileUnits(sr)
		closer.Close()
		if err != nil || len(units) == 0 {
			continue
		}
		c := cuSources{member: m.Name}
		for _, u := range units {
			if u.Name != "" {
				c.files = append(c.files, absJoin(u.CompDir, u.Name))
			}
			c.files = append(c.files, u.Files...)
		}
		cus = append(cus, c)
	}
	return members, cus, nil
}

func absJoin(dir, name string) string {
	if len(name) > 0 && name[0] == '/' || dir == "" {
		return name
	}
	return dir + "/" + name
}
