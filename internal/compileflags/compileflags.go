// Package compileflags compares the options an object file says it was compiled with against the ones
// its step's command gives now.
//
// GCC writes the options of a compile into each compile unit's DW_AT_producer attribute when it emits
// DWARF ("GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O0"; -grecord-gcc-switches is its default).
// A build system that does not compare commands (Make) leaves an object compiled with another command
// as it is: `make CFLAGS=-O0` once, then a plain `make`, says "up to date" over -O0 objects though the
// Makefile asks for -O2, and a from-scratch build makes other code. The object's own bytes say so
// whatever the build's records, the user's shell or an earlier check kept.
//
// Annotate reads, for each live step whose command is a GCC-style compile (`-c`, a cc/gcc/g++/c++
// driver) that a build system does not watch, the producer of the object it writes (an object without
// DWARF says nothing), and records the optimization level that differs (graph.CommandRecords.Built). Only
// the optimization level is compared: the driver adds options of its own (-mtune, -march, hardening
// defaults) and expands others (-march=native), and leaves out -D, -I and warnings; the level it
// records is exactly the last -O the command gives (none: -O0; -O: -O1). A producer with no options
// (clang without -grecord-command-line) says nothing.
package compileflags

import (
	"debug/elf"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/cmdargs"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// gccDriver matches the program names of GCC's C and C++ drivers, with a target prefix or a version
// suffix (x86_64-linux-gnu-gcc-12, g++-12, cc, c++).
var gccDriver = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9_.]+-)*(gcc|g\+\+|cc|c\+\+)(-[0-9.]+)?$`)
})

// Compile is what a command line says of one GCC-style compile: the object it writes and the
// optimization level it asks for.
type Compile struct {
	Object string // the -o argument, as written
	Dir    string // the folder a `cd DIR &&` before it moves to ("" when none): Object is relative to it
	Level  string // "-O0", "-O1", "-O2", "-O3", "-Os", "-Og", "-Ofast", "-Oz"
}

// ParseCommand returns the GCC-style compiles among the lines of cmd, each with the object it writes
// (the -o argument, or the source's name with .o when there is none) and the optimization level it asks
// for. Words are split as the shell splits them (cmdargs.Commands: `-DFLAGS="-g -O3"` is one word), and
// a line is cut at its command separators.
func ParseCommand(cmd string) []Compile {
	var out []Compile
	for _, line := range strings.Split(cmd, "\n") {
		dir := ""
		for _, words := range cmdargs.Commands(line) {
			if len(words) == 2 && words[0] == "cd" {
				dir = filepath.Join(dir, words[1])
				continue
			}
			i := 0
			for i < len(words) && (isAssignment(words[i]) || isLauncher(words[i])) {
				i++
			}
			if i >= len(words) || !gccDriver().MatchString(filepath.Base(words[i])) {
				continue
			}
			var obj, level string
			var sources []string
			compile, told := false, true
			for j := i + 1; j < len(words); j++ {
				w := words[j]
				switch {
				case strings.HasPrefix(w, "@"):
					told = false // a response file may hold any option
				case w == "-c":
					compile = true
				case w == "-o" && j+1 < len(words):
					obj = words[j+1]
					j++
				case optLevel().MatchString(w):
					level = w
				case w == "-x" || w == "-MF" || w == "-MT" || w == "-MQ" || w == "-include" || w == "-I" || w == "-isystem" || w == "-iquote":
					j++ // its argument is no source
				case !strings.HasPrefix(w, "-") && sourceExt[filepath.Ext(w)]:
					sources = append(sources, w)
				}
			}
			if obj == "" && len(sources) == 1 {
				obj = strings.TrimSuffix(filepath.Base(sources[0]), filepath.Ext(sources[0])) + ".o" // gcc -c a.c writes a.o here
			}
			if !compile || !told || obj == "" || len(sources) > 1 {
				continue
			}
			out = append(out, Compile{Object: obj, Dir: dir, Level: normalLevel(level)})
		}
	}
	return out
}

// optLevel matches the optimization options GCC takes.
var optLevel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-O([0-3sgz]|fast)?$`) })

// sourceExt are the file name endings GCC compiles as C or C++.
var sourceExt = map[string]bool{".c": true, ".cc": true, ".cpp": true, ".cxx": true, ".c++": true, ".C": true, ".i": true, ".ii": true}

func isAssignment(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	return ok && k != "" && !strings.HasPrefix(k, "-") && !strings.Contains(k, "/")
}

// isLauncher: programs that run the compiler after them (compiler caches, env, time).
func isLauncher(w string) bool {
	switch filepath.Base(w) {
	case "ccache", "sccache", "distcc", "icecc", "env", "time", "nice":
		return true
	}
	return false
}

// normalLevel is the optimization level GCC takes from the last -O option ("" when none).
func normalLevel(o string) string {
	switch o {
	case "":
		return "-O0"
	case "-O":
		return "-O1"
	}
	return o
}

// ProducerLevel returns the optimization level a GCC producer string records, ok false when the
// producer is not GCC's or records no options at all (then it says nothing either way).
func ProducerLevel(producer string) (level string, ok bool) {
	if !strings.HasPrefix(producer, "GNU C") {
		return "", false
	}
	words := strings.Fields(producer)
	any := false
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "-") {
			any = true
			if strings.HasPrefix(w, "-O") {
				level = w
			}
		}
	}
	if !any {
		return "", false
	}
	return normalLevel(level), true
}

// Annotate fills graph.CommandRecords.Built for every live step whose object was compiled at another
// optimization level than its command gives now (see the package comment).
func Annotate(g *graph.Graph) {
	for _, s := range g.Steps {
		if !s.Live() || s.Command == "" || s.Failed != "" || !s.Reference.Exists || s.Cmd().CommandWatched {
			continue
		}
		var c Compile
		var obj string
		n := 0
		for _, x := range ParseCommand(s.Command) {
			o := x.Object
			if !filepath.IsAbs(o) {
				dir := x.Dir
				if !filepath.IsAbs(dir) {
					dir = filepath.Join(s.Cmd().CommandDir, dir)
				}
				o = filepath.Join(dir, o)
			}
			if o = filepath.Clean(o); isOutput(s, o) {
				c, obj, n = x, o, n+1
			}
		}
		if n != 1 {
			continue // no compile of the step's own object, or several (which options made it is not told)
		}
		producer, ok := s.Cmd().Producer, s.Cmd().Producer != "" && obj == s.Reference.Path
		if !ok {
			producer, ok = objectProducer(obj)
		}
		if !ok {
			continue
		}
		level, ok := ProducerLevel(producer)
		if !ok || level == c.Level {
			continue
		}
		s.OwnCmd().Built = &graph.BuiltOptions{Object: obj, Producer: producer, Was: level, Now: c.Level}
	}
}

func isOutput(s *graph.Step, path string) bool {
	if s.Reference.Path == path {
		return true
	}
	for _, o := range s.Outputs {
		if o.Path == path {
			return true
		}
	}
	return false
}

// objectProducer returns the producer of the first compile unit of a relocatable object that has one.
// An object that does not read (not ELF, no DWARF, damaged) says nothing here: other rules judge it.
func objectProducer(path string) (string, bool) {
	f, err := binfmt.OpenELF(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if f.Type != elf.ET_REL {
		return "", false
	}
	cus, err := f.CompileUnits()
	if err != nil {
		return "", false
	}
	for _, cu := range cus {
		if cu.Producer != "" {
			return cu.Producer, true
		}
	}
	return "", false
}
