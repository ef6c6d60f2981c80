package gentarget

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// arMember is one member of an ar archive.
type arMember struct {
	Name    string
	Data    []byte
	Symbols []string // global symbols the member defines (for the armap)
}

// writeAr returns a GNU ar archive as `ar rcs` from binutils 2.40 (deterministic mode, Debian's
// default) writes it: "!<arch>\n", the "/" symbol table when any member defines a symbol, the "//"
// long-name table when a name is longer than 15 bytes, then the members; uid, gid and date 0, mode
// 644 (the armap's mode 0), every member at an even offset. See docs/binary-formats.md §1.
func writeAr(members []arMember) []byte {
	// Long-name table.
	var long bytes.Buffer
	nameField := make([]string, len(members))
	for i, m := range members {
		if len(m.Name) <= 15 {
			nameField[i] = m.Name + "/"
			continue
		}
		nameField[i] = fmt.Sprintf("/%d", long.Len())
		long.WriteString(m.Name + "/\n")
	}
	if long.Len()%2 == 1 {
		long.WriteByte('\n')
	}
	var nsyms int
	var symNames bytes.Buffer
	for _, m := range members {
		for _, s := range m.Symbols {
			nsyms++
			symNames.WriteString(s)
			symNames.WriteByte(0)
		}
	}
	symSize := 0
	if nsyms > 0 {
		if symNames.Len()%2 == 1 {
			symNames.WriteByte(0) // binutils pads the name list to an even size, counted in the size
		}
		symSize = 4 + 4*nsyms + symNames.Len()
	}
	pad := func(n int) int { return n + n%2 }
	// Offsets of the member headers.
	off := 8
	if nsyms > 0 {
		off += 60 + pad(symSize)
	}
	if long.Len() > 0 {
		off += 60 + long.Len()
	}
	offsets := make([]int, len(members))
	for i, m := range members {
		offsets[i] = off
		off += 60 + pad(len(m.Data))
	}

	var b bytes.Buffer
	b.Grow(off)
	b.WriteString("!<arch>\n")
	header := func(name, mode string, size int) {
		if name == "//" {
			fmt.Fprintf(&b, "%-48s%-10d`\n", name, size)
			return
		}
		fmt.Fprintf(&b, "%-16s%-12s%-6s%-6s%-8s%-10d`\n", name, "0", "0", "0", mode, size)
	}
	if nsyms > 0 {
		header("/", "0", symSize)
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(nsyms))
		b.Write(n[:])
		for i, m := range members {
			for range m.Symbols {
				binary.BigEndian.PutUint32(n[:], uint32(offsets[i]))
				b.Write(n[:])
			}
		}
		b.Write(symNames.Bytes())
	}
	if long.Len() > 0 {
		header("//", "", long.Len())
		b.Write(long.Bytes())
	}
	for i, m := range members {
		header(nameField[i], "644", len(m.Data))
		b.Write(m.Data)
		if len(m.Data)%2 == 1 {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
