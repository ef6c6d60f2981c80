package cargo

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// BuildOutput is what a build script printed to stdout, as Cargo keeps it in the run folder's
// `output` file (the whole stdout, written only on success). Directives follow `BuildOutput::parse`
// in Cargo's src/cargo/core/compiler/custom_build.rs: lines starting `cargo::` (cargo ≥ 1.77) or
// `cargo:`; other lines are kept only when they are compiler command lines that cc-rs logs.
type BuildOutput struct {
	RerunIfChanged    []string // as printed (relative to the package root, or absolute)
	RerunIfEnvChanged []string
	LinkLibs          []LinkLib
	LinkSearch        []LinkSearch
	// Commands are the `running: ...` lines (cc-rs logs them in old versions or with
	// CC_ENABLE_DEBUG_OUTPUT), split into words.
	Commands [][]string
	// EnvReads are the environment lookups cc-rs (and the cmake crate through it) logs as
	// `NAME = None` or `NAME = Some("value")` (Rust's Debug form), in printed order.
	EnvReads []graph.EnvRead
	// CMakeFlags are the `-DCMAKE_<LANG>_FLAGS=` values of the cmake configure lines among Commands
	// (the cmake crate logs its command but not the CFLAGS/CXXFLAGS lookups behind them); Names is left
	// for the reader to fill, it depends on the unit's target.
	CMakeFlags []graph.FlagsSeen
	// MetadataPaths are the values of `cargo:KEY=VALUE` metadata lines (old syntax: any key that is not
	// a directive; new: `cargo::metadata=KEY=VALUE`) that are absolute paths: what dependants' build
	// scripts get as DEP_<links>_<KEY>, e.g. an include folder a C consumer compiles against.
	MetadataPaths []string
	// AbsPaths are the absolute paths the output names anywhere: directive values (rustc-env values,
	// link-search folders, metadata) and the words of `running:` lines (a `-I` folder without its flag),
	// in printed order: where the script ran and what it used (internal/cargo/othertree.go).
	AbsPaths []string
}

// LinkLib is a `rustc-link-lib=[KIND[:MODIFIERS]=]NAME[:RENAME]` directive.
type LinkLib struct {
	Kind, Modifiers, Name string
}

// LinkSearch is a `rustc-link-search=[KIND=]PATH` directive.
type LinkSearch struct {
	Kind, Path string
}

// ParseBuildOutput parses a build script's stdout. rootOutput is the `root-output` file's content
// (the OUT_DIR the script ran with) and outDir the OUT_DIR where the folder is now: Cargo rewrites that
// prefix in every directive value when a target folder has moved, and so does this function.
func ParseBuildOutput(data []byte, rootOutput, outDir string) *BuildOutput {
	bo := &BuildOutput{}
	// cc-rs logs dozens of environment look-ups a run: they are gathered in a pooled list and kept in
	// one of their exact length (a list grown by appends left as much again behind, for every run).
	reads := envReadBufs.Get().(*[]graph.EnvRead)
	defer envReadBufs.Put(reads)
	*reads = (*reads)[:0]
	rewrite := func(v string) string {
		if rootOutput != "" && outDir != "" && rootOutput != outDir && strings.HasPrefix(v, rootOutput) {
			return outDir + strings.TrimPrefix(v, rootOutput)
		}
		return v
	}
	// One string for the whole output, lines as its slices (what they keep, a directive's value, holds
	// it alive: a few kilobytes a run), instead of a string per line.
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(strings.TrimSuffix(line, "\n"), "\r")
		if rest, ok := strings.CutPrefix(line, "running: "); ok {
			if words := shellWords(rest); len(words) > 0 {
				for _, w := range words {
					w = strings.TrimPrefix(w, "-I")
					if filepath.IsAbs(w) {
						bo.AbsPaths = append(bo.AbsPaths, w)
					}
				}
				bo.Commands = append(bo.Commands, words)
				bo.CMakeFlags = append(bo.CMakeFlags, cmakeFlags(words)...)
			}
			continue
		}
		if name, quoted, set, ok := envRead(line); ok {
			er := graph.EnvRead{Name: name, Set: set}
			if set {
				if v, err := strconv.Unquote(quoted); err == nil {
					er.Value = v
				} else {
					er.Value = quoted[1 : len(quoted)-1]
				}
			}
			*reads = append(*reads, er)
			continue
		}
		var body string
		if b, ok := strings.CutPrefix(line, "cargo::"); ok {
			body = b
		} else if b, ok := strings.CutPrefix(line, "cargo:"); ok {
			body = b
		} else {
			continue
		}
		key, val, ok := strings.Cut(body, "=")
		if !ok {
			continue
		}
		val = rewrite(strings.TrimSpace(val))
		if i := strings.LastIndexByte(val, '='); filepath.IsAbs(val[i+1:]) {
			bo.AbsPaths = append(bo.AbsPaths, val[i+1:]) // rustc-env=K=/p, rustc-link-search=native=/p, include=/p
		}
		switch key {
		case "rerun-if-changed":
			bo.RerunIfChanged = append(bo.RerunIfChanged, val)
		case "rerun-if-env-changed":
			bo.RerunIfEnvChanged = append(bo.RerunIfEnvChanged, val)
		case "rustc-link-lib":
			bo.LinkLibs = append(bo.LinkLibs, parseLinkLib(val))
		case "rustc-link-search":
			kind, p, found := strings.Cut(val, "=")
			if !found {
				kind, p = "all", val
			}
			bo.LinkSearch = append(bo.LinkSearch, LinkSearch{Kind: kind, Path: rewrite(p)})
		case "metadata":
			if _, v, ok := strings.Cut(val, "="); ok && filepath.IsAbs(v) {
				bo.MetadataPaths = append(bo.MetadataPaths, rewrite(v))
			}
		default:
			if !strings.HasPrefix(line, "cargo::") && !strings.HasPrefix(key, "rustc-") && !strings.HasPrefix(key, "rerun-") &&
				key != "warning" && key != "error" && filepath.IsAbs(val) {
				bo.MetadataPaths = append(bo.MetadataPaths, val)
			}
		}
	}
	if len(*reads) > 0 {
		bo.EnvReads = slices.Clone(*reads)
	}
	return bo
}

// envReadBufs are ParseBuildOutput's lists of environment look-ups, one per parse at a time.
var envReadBufs = sync.Pool{New: func() any { return new([]graph.EnvRead) }}

// intern replaces every string bo holds with the interner's copy. The parse keeps slices of the
// whole output (one string for all its lines), which pin it as long as any is kept: a run's step keeps
// its environment look-ups, link names and folders for the whole check, and a large tree has thousands
// of runs whose outputs say the same words (each copy of a package prints the same look-ups). A
// reader keeps an interner: one copy of each word for all runs, and the outputs can go.
func (bo *BuildOutput) intern(in *interner) {
	str := in.str
	each := func(ss []string) {
		for i := range ss {
			ss[i] = str(ss[i])
		}
	}
	each(bo.RerunIfChanged)
	each(bo.RerunIfEnvChanged)
	for i := range bo.LinkLibs {
		l := &bo.LinkLibs[i]
		l.Kind, l.Modifiers, l.Name = str(l.Kind), str(l.Modifiers), str(l.Name)
	}
	for i := range bo.LinkSearch {
		bo.LinkSearch[i].Kind, bo.LinkSearch[i].Path = str(bo.LinkSearch[i].Kind), str(bo.LinkSearch[i].Path)
	}
	for _, c := range bo.Commands {
		each(c)
	}
	for i := range bo.EnvReads {
		e := &bo.EnvReads[i]
		e.Name, e.Value = str(e.Name), str(e.Value)
	}
	bo.EnvReads = in.readList(bo.EnvReads)
	for i := range bo.CMakeFlags {
		f := &bo.CMakeFlags[i]
		f.Var, f.Value, f.Define = str(f.Var), str(f.Value), str(f.Define)
		each(f.Names)
	}
	each(bo.MetadataPaths)
	each(bo.AbsPaths)
}

// readList returns one shared copy of each list of look-ups (each copy of a package's script logs the
// same ones): the list is only read after the parse.
func (in *interner) readList(rs []graph.EnvRead) []graph.EnvRead {
	if len(rs) == 0 {
		return rs
	}
	var b strings.Builder
	for _, e := range rs {
		b.WriteString(e.Name)
		b.WriteByte(0)
		b.WriteString(e.Value)
		if e.Set {
			b.WriteByte(1)
		} else {
			b.WriteByte(0)
		}
	}
	key := b.String()
	if v, ok := in.lists.Load(key); ok {
		return v.([]graph.EnvRead)
	}
	v, _ := in.lists.LoadOrStore(key, slices.Clip(rs))
	return v.([]graph.EnvRead)
}

// interner keeps one copy of each string (and look-up list) it is given, for all the workers of a read.
type interner struct{ m, lists sync.Map }

func (in *interner) str(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := in.m.Load(s); ok {
		return v.(string)
	}
	c := strings.Clone(s)
	v, _ := in.m.LoadOrStore(c, c)
	return v.(string)
}

// envRead reads cc-rs's log of one environment lookup (cc-rs src/lib.rs, `getenv`: it prints
// `{v} = {r:?}` of an Option<String>; observed with cc 1.0.73): `NAME = None` or `NAME = Some("…")`,
// the name `[A-Za-z_][A-Za-z0-9_-]*`. quoted is the Debug-quoted value (set: Some). Matched by hand:
// every line of every build script's output is asked.
func envRead(line string) (name, quoted string, set, ok bool) {
	i := strings.Index(line, " = ")
	if i <= 0 {
		return "", "", false, false
	}
	name, rest := line[:i], line[i+3:]
	for j := 0; j < len(name); j++ {
		c := name[j]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || j > 0 && (c >= '0' && c <= '9' || c == '-')) {
			return "", "", false, false
		}
	}
	if rest == "None" {
		return name, "", false, true
	}
	if len(rest) >= len(`Some("")`) && strings.HasPrefix(rest, `Some("`) && strings.HasSuffix(rest, `")`) && !strings.Contains(rest, "\n") {
		return name, rest[len("Some(") : len(rest)-1], true, true
	}
	return "", "", false, false
}

func parseLinkLib(v string) LinkLib {
	var l LinkLib
	kind, name, found := strings.Cut(v, "=")
	if !found {
		name, kind = v, ""
	}
	kind, mods, _ := strings.Cut(kind, ":")
	name, _, _ = strings.Cut(name, ":") // NAME:RENAME links NAME
	l.Kind, l.Modifiers, l.Name = kind, mods, name
	return l
}

// nativeExts are the source extensions stalecheck treats as native inputs (documented in README).
var nativeExts = map[string]bool{
	".c": true, ".cc": true, ".cpp": true, ".cxx": true, ".cu": true, ".cuh": true,
	".h": true, ".hh": true, ".hpp": true, ".S": true, ".s": true, ".asm": true,
}

// IsNativeSource reports whether a file name has one of the native source extensions.
func IsNativeSource(name string) bool { return nativeExts[filepath.Ext(name)] }

// CommandSources returns the native source files a compiler command line compiles or includes by
// name: arguments with a native extension that are not the value of an output option.
func CommandSources(words []string) []string {
	var out []string
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch w {
		case "-o", "-MF", "-MT", "-MQ", "--output-file", "-odir":
			i++
			continue
		}
		if strings.HasPrefix(w, "-") {
			// -include FILE names an input too.
			if (w == "-include" || w == "--pre-include") && i+1 < len(words) {
				out = append(out, words[i+1])
				i++
			}
			continue
		}
		if IsNativeSource(w) {
			out = append(out, w)
		}
	}
	return out
}

// shellWords splits a cc-rs `running:` line. cc-rs prints each word in double quotes with Rust Debug
// escapes ("\"" and "\\"); environment assignments such as ZERO_AR_DATE="1" come first.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, have := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in && c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == '"':
			in = !in
			have = true
		case !in && (c == ' ' || c == '\t'):
			if have || cur.Len() > 0 {
				out = append(out, cur.String())
			}
			cur.Reset()
			have = false
		default:
			cur.WriteByte(c)
		}
	}
	if have || cur.Len() > 0 {
		out = append(out, cur.String())
	}
	// Drop leading VAR=value assignments.
	for len(out) > 0 && strings.Contains(out[0], "=") && !strings.HasPrefix(out[0], "-") && !strings.Contains(out[0], "/") {
		out = out[1:]
	}
	return out
}

// fmtTime formats nanoseconds since the epoch for messages: RFC 3339 with nanoseconds, UTC.
func fmtTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

// cmakeFlags returns the C and C++ flags a cmake configure command line (one `running:` line of the
// cmake crate: `cd "<build>" && CMAKE_PREFIX_PATH="" "cmake" "<src>" "-DCMAKE_C_FLAGS=…" …`) hands to
// CMake; none for `cmake --build` or any other command. The cmake crate (0.1.45) builds the value as
// `<its own cflags> <cc-rs's default flags> <the CFLAGS tokens>` minus -O*/-g, cc-rs (1.0.73) appending
// the first set of CFLAGS_<target>, CFLAGS_<target_>, HOST_/TARGET_CFLAGS, CFLAGS split on whitespace
// last, and neither logs the lookup.
func cmakeFlags(words []string) []graph.FlagsSeen {
	cmake := -1
	for i, w := range words {
		if filepath.Base(w) == "cmake" {
			cmake = i
			break
		}
	}
	if cmake < 0 || cmake+1 < len(words) && words[cmake+1] == "--build" {
		return nil
	}
	var out []graph.FlagsSeen
	for _, w := range words[cmake+1:] {
		for _, lang := range []struct{ define, env string }{{"-DCMAKE_C_FLAGS", "CFLAGS"}, {"-DCMAKE_CXX_FLAGS", "CXXFLAGS"}} {
			if v, ok := strings.CutPrefix(w, lang.define+"="); ok {
				out = append(out, graph.FlagsSeen{Var: lang.env, Value: v, Define: lang.define})
			}
		}
	}
	return out
}
