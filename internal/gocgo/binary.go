package gocgo

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Setting is one build setting of a Go binary (runtime/debug.BuildSetting), in the binary's order.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Binary is what a Go binary says about its own build. Size is in bytes, MTimeNS in nanoseconds.
type Binary struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	MTimeNS int64  `json:"mtime_ns"`
	// WrittenNS is when go build last wrote the binary: its birth time when the file system keeps one
	// and it is older than the mtime, else the mtime. go build writes a new file when it links (a
	// rename or a fresh copy), and only moves the mtime of one that is up to date: after an edit its
	// cache does not see (a header behind -I), `go build` touches the binary without relinking it.
	WrittenNS int64 `json:"written_ns"`
	// GoVersion is the toolchain ("go1.26.8"); MainPackage the import path of package main
	// ("command-line-arguments" for `go build file.go`); MainModule and MainVersion the module.
	GoVersion   string    `json:"go_version"`
	MainPackage string    `json:"main_package"`
	MainModule  string    `json:"main_module"`
	MainVersion string    `json:"main_version"`
	Settings    []Setting `json:"settings"`
	// BuildID is the Go build ID from the ELF note .note.go.buildid ("" when there is none); it
	// changes when, and only when, the binary is linked again (cmd/go/internal/work/buildid.go).
	BuildID string `json:"build_id,omitempty"`
}

// Setting returns a build setting's value and whether the binary has it.
func (b *Binary) Setting(key string) (string, bool) {
	for _, s := range b.Settings {
		if s.Key == key {
			return s.Value, true
		}
	}
	return "", false
}

// ErrNotGo is wrapped by ReadBinary's error for a file that holds no Go build info.
var ErrNotGo = errors.New("not a Go binary (no Go build info)")

// ReadBinary reads a Go binary's build info (debug/buildinfo, no subprocess) and build ID. Errors name
// the path: not a regular file, unreadable, ErrNotGo (another program, a truncated file whose build
// info is cut off, a binary built without module info).
func ReadBinary(path string) (*Binary, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gocgo: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("gocgo: %w", err)
	}
	b := &Binary{Path: path, Size: st.Size(), MTimeNS: st.ModTime().UnixNano()}
	b.WrittenNS = b.MTimeNS
	if bt, ok := birthNS(path); ok && bt > 0 && bt < b.MTimeNS {
		b.WrittenNS = bt
	}
	info, err := buildinfo.Read(f)
	if err != nil {
		return nil, fmt.Errorf("gocgo: %s: %w (%v)", path, ErrNotGo, err)
	}
	b.GoVersion, b.MainPackage = info.GoVersion, info.Path
	b.MainModule, b.MainVersion = info.Main.Path, info.Main.Version
	for _, s := range info.Settings {
		b.Settings = append(b.Settings, Setting{s.Key, s.Value})
	}
	b.BuildID = goBuildID(f)
	return b, nil
}

// goBuildID reads the "Go" note of type 4 in .note.go.buildid (cmd/internal/buildid's ELF form).
func goBuildID(r io.ReaderAt) string {
	ef, err := elf.NewFile(r)
	if err != nil {
		return ""
	}
	sec := ef.Section(".note.go.buildid")
	if sec == nil || sec.Size > 4096 {
		return ""
	}
	data, err := sec.Data()
	if err != nil || len(data) < 16 {
		return ""
	}
	bo := ef.ByteOrder
	namesz, descsz, typ := bo.Uint32(data), bo.Uint32(data[4:]), bo.Uint32(data[8:])
	nameEnd := 12 + int((namesz+3)&^3)
	if typ != 4 || namesz != 4 || !bytes.Equal(data[12:15], []byte("Go\x00")) || nameEnd+int(descsz) > len(data) {
		return ""
	}
	return string(data[nameEnd : nameEnd+int(descsz)])
}

// ListOptionsFor returns Read options that list the module as the binary was built: its -tags, its
// GOOS, GOARCH and CGO_ENABLED, and its CGO_CPPFLAGS/CFLAGS/CXXFLAGS/LDFLAGS (prepended to every
// package's flags, as cmd/go does) plus -extldflags from -ldflags. Settings are split into words as
// cmd/go splits them (quoted.Split: spaces, with '…' and "…" quoting).
func ListOptionsFor(b *Binary) Options {
	var o Options
	var f Flags
	for _, s := range b.Settings {
		switch s.Key {
		case "-tags":
			o.Tags = s.Value
		case "GOOS", "GOARCH", "CGO_ENABLED":
			o.Env = append(o.Env, s.Key+"="+s.Value)
		case "CGO_CPPFLAGS":
			f.CPPFLAGS = splitQuoted(s.Value)
		case "CGO_CFLAGS":
			f.CFLAGS = splitQuoted(s.Value)
		case "CGO_CXXFLAGS":
			f.CXXFLAGS = splitQuoted(s.Value)
		case "CGO_LDFLAGS":
			f.LDFLAGS = append(f.LDFLAGS, splitQuoted(s.Value)...)
		case "-ldflags":
			words := splitQuoted(s.Value)
			for i := 0; i < len(words); i++ {
				w := words[i]
				if strings.HasPrefix(w, "-extldflags=") {
					f.LDFLAGS = append(f.LDFLAGS, splitQuoted(strings.TrimPrefix(w, "-extldflags="))...)
				} else if (w == "-extldflags" || w == "--extldflags") && i+1 < len(words) {
					i++
					f.LDFLAGS = append(f.LDFLAGS, splitQuoted(words[i])...)
				}
			}
		}
	}
	o.CgoEnv = f
	return o
}

// splitQuoted splits s at spaces, honouring '…' and "…" (cmd/internal/quoted.Split's rule).
func splitQuoted(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
