package ninja

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// A dyndep file (an edge's `dyndep = main.dd`, written by an edge of the build before ninja runs the
// edge that names it) adds implicit inputs and outputs to edges:
//
//	ninja_dyndep_version = 1
//	build main.o | main.mod: dyndep | data.h other.mod
//	  restat = 1
//
// Ninja loads it before it decides whether the edge is dirty, so the implicit inputs it lists are
// watched as the manifest's own are.

// parseDyndep returns, for each output a `build` statement of the dyndep file at path names, the
// implicit inputs it adds (manifest paths, as written), or why ninja would refuse the file (its
// src/dyndep_parser.cc): it cannot be read as a regular file; its first statement is not
// `ninja_dyndep_version = 1` (1.0; any other version is unsupported); a line is neither a build
// statement `build OUT [| OUTS]: dyndep [| INS]` nor the indented `restat = ...` after one. Ninja stops
// on such a file, so the edge's inputs are not known: its caller reports the file.
func parseDyndep(path string) (map[string][]string, error) {
	data, err := safeio.ReadFile(path, MaxManifest)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	version, lastBuild := false, false
	bad := func(line int, why string) error {
		return fmt.Errorf("line %d: %s: ninja refuses the dyndep file", line, why)
	}
	for _, l := range splitLines(data) {
		if l.text == "" || strings.HasPrefix(l.text, "#") {
			continue
		}
		if !version {
			v, ok := strings.CutPrefix(l.text, "ninja_dyndep_version")
			v, ok2 := strings.CutPrefix(strings.TrimLeft(v, " "), "=")
			if l.indent || !ok || !ok2 {
				return nil, bad(l.line, "expected 'ninja_dyndep_version = ...'")
			}
			if v = strings.TrimSpace(v); !dyndepVersionOK(v) {
				return nil, bad(l.line, fmt.Sprintf("unsupported 'ninja_dyndep_version = %s'", v))
			}
			version = true
			continue
		}
		if l.indent {
			if k, _, _ := strings.Cut(l.text, "="); !lastBuild || strings.TrimSpace(k) != "restat" {
				return nil, bad(l.line, "only an indented 'restat = ...' may follow a build statement")
			}
			lastBuild = false
			continue
		}
		rest, ok := strings.CutPrefix(l.text, "build ")
		if !ok {
			return nil, bad(l.line, "expected a build statement")
		}
		outs, i, why := parsePaths(rest)
		if why != "" || len(outs) != 1 {
			return nil, bad(l.line, "a build statement names one explicit output")
		}
		// Implicit outputs after '|', then ':'.
		if i < len(rest) && rest[i] == '|' {
			_, j, why := parsePaths(rest[i+1:])
			if why != "" {
				return nil, bad(l.line, why)
			}
			i += 1 + j
		}
		if i >= len(rest) || rest[i] != ':' {
			return nil, bad(l.line, "expected ':'")
		}
		after := strings.TrimLeft(rest[i+1:], " ")
		after, ok = strings.CutPrefix(after, "dyndep")
		if !ok || after != "" && after[0] != ' ' && after[0] != '|' {
			return nil, bad(l.line, "expected build command name 'dyndep'")
		}
		var ins []string
		if after = strings.TrimLeft(after, " "); strings.HasPrefix(after, "|") {
			ps, _, why := parsePaths(after[1:])
			if why != "" {
				return nil, bad(l.line, why)
			}
			for _, p := range ps {
				ins = append(ins, canon(p.eval(func(string) string { return "" })))
			}
		} else if after != "" {
			return nil, bad(l.line, "explicit inputs not supported")
		}
		out[canon(outs[0].eval(func(string) string { return "" }))] = ins
		lastBuild = true
	}
	if !version {
		return nil, errors.New("expected 'ninja_dyndep_version = ...': ninja refuses the dyndep file")
	}
	return out, nil
}

// dyndepVersionOK is ninja's test of a dyndep file's version: major 1, minor 0 ("1", "1.0", "1.0.2").
func dyndepVersionOK(v string) bool {
	major, rest, _ := strings.Cut(v, ".")
	minor, _, _ := strings.Cut(rest, ".")
	return atoiLoose(major) == 1 && atoiLoose(minor) == 0
}

// atoiLoose is C's atoi: the leading digits, 0 for none.
func atoiLoose(s string) int {
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1e6; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}
