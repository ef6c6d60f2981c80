package explain

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// PackageReport explains the build folders of one package.
type PackageReport struct {
	Name     string   `json:"package"`
	Version  string   `json:"version,omitempty"` // the version asked for (pkg@version); "" for all
	Versions []string `json:"versions"`          // every version found on disk
	// Sources says where Cargo takes the package from, per package folder, as the records show.
	Sources []Source `json:"sources"`
	// Metadata is `cargo metadata`'s answer (AskCargo); MetadataErr when it failed.
	Metadata    []MetaPackage `json:"cargo_metadata,omitempty"`
	MetadataErr string        `json:"cargo_metadata_error,omitempty"`
	Roles       []Role        `json:"roles"`
}

// Source is one folder a package is built from.
type Source struct {
	Root     string `json:"root"`
	Version  string `json:"version"`
	Kind     string `json:"kind"`      // path, registry, directory, git ("" unknown)
	SourceID string `json:"source_id"` // Cargo.lock's source
	Patch    string `json:"patch,omitempty"`
}

// Role groups the units of one target of the package (e.g. its lib, its build-script run): several
// units of one role are several configurations.
type Role struct {
	Target   string    `json:"target"` // the fingerprint file name, e.g. "lib-seed_sys"
	Kind     string    `json:"kind"`
	Variants []Variant `json:"variants"`
	// Differ lists the fields whose values are not the same in every variant; Same the others.
	Differ []Field `json:"differ"`
	Same   []Field `json:"same"`
}

// Variant is one unit (one build folder or fingerprint folder) of a role.
type Variant struct {
	Unit    string      `json:"unit"` // <pkg>-<hash>
	Profile string      `json:"profile"`
	Version string      `json:"version"`
	Dir     string      `json:"dir"` // build/<pkg>-<hash> for build-script units, else the fingerprint folder
	Bytes   int64       `json:"bytes,omitempty"`
	Fields  []Field     `json:"fields"`
	UsedBy  []RootUse   `json:"used_by"`
	Failed  string      `json:"failed,omitempty"`
	Step    *graph.Step `json:"-"`
}

// Field is one configuration value read from a fingerprint. In Role.Differ, Values holds one value per
// variant (in Variants order) and Meaning says in a line what such a difference means; elsewhere Value
// holds the value. Fields Cargo keeps only as a u64 hash are written "hash <decimal>" (the number in the
// fingerprint JSON).
type Field struct {
	Name    string   `json:"name"`
	Value   string   `json:"value,omitempty"`
	Values  []string `json:"values,omitempty"`
	Meaning string   `json:"meaning,omitempty"`
}

// meanings says, per field, what a difference between two units means.
var meanings = map[string]string{
	"profile folder":    "built in another profile folder: another profile (dev, release, a custom one) or a --target triple",
	"features":          "another set of Cargo features was enabled for the package: --features, a dependent's features, default features",
	"declared features": "the package's [features] table was different when each was built",
	"profile settings":  "a [profile] setting differs: opt-level, debug, lto, codegen-units, panic, overflow-checks, debug-assertions, strip, incremental…",
	"rustflags":         "other RUSTFLAGS (or build.rustflags, target.<triple>.rustflags) were in effect",
	"compile kind":      "built for the host or for a --target triple",
	"rustc":             "built by another rustc: a toolchain update, override or RUSTC setting (the hash of rustc -vV)",
	"target settings":   "the target itself differs: its name, kind, crate types, edition, source file or test/bench/doc settings",
	"source path":       "the package came from another place: another folder, copy, registry or version of it",
	"config":            "a Cargo setting that changes compilation differs, such as the linker (target.<triple>.linker)",
	"watches":           "the build script printed other rerun-if-changed or rerun-if-env-changed lines",
	"fingerprint":       "a unit's fingerprint could not be read, so its configuration is unknown",
}

// meaning returns what a difference in the named field means.
func meaning(name string) string {
	if m, ok := meanings[name]; ok {
		return m
	}
	if strings.HasPrefix(name, "dep ") {
		return "the dependency was built differently or from other sources: compare the units each names"
	}
	return ""
}

// hashValue writes a u64 that Cargo keeps only as a hash.
func hashValue(v uint64) string { return "hash " + strconv.FormatUint(v, 10) }

// Package explains the units of a package: name or name@version.
func Package(g *graph.Graph, spec string, opt Options) (*PackageReport, error) {
	name, version, _ := strings.Cut(spec, "@")
	l := newLoader(g)
	var steps []*graph.Step
	versions := map[string]bool{}
	for _, s := range g.Steps {
		if s.Package != name {
			continue
		}
		v := stepVersion(g, s)
		if v != "" {
			versions[v] = true
		}
		if version != "" && v != version {
			continue
		}
		steps = append(steps, s)
	}
	rep := &PackageReport{Name: name, Version: version, Versions: sortedKeys(versions)}
	if len(rep.Versions) == 0 && len(steps) == 0 {
		return nil, fmt.Errorf("no unit of package %q in %s (packages with units there: %s)", name, g.BuildDir, strings.Join(packageNames(g), ", "))
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("no unit of %s version %s in %s; versions on disk: %s", name, version, g.BuildDir, strings.Join(rep.Versions, ", "))
	}
	// Where from.
	seen := map[string]bool{}
	for _, s := range steps {
		root := cargo.UnitPackageRoot(g, s)
		if root == "" || seen[root] {
			continue
		}
		seen[root] = true
		src := Source{Root: root, Version: stepVersion(g, s), Kind: unit.Of(s).Source, SourceID: unit.Of(s).SourceID}
		if src.Kind == "" {
			// This unit's details were not read (not live, e.g. the other side of a feature toggle):
			// any unit built from the same folder says where Cargo takes it from.
			for _, o := range g.Steps {
				if unit.Of(o).Source != "" && o.PackageRoot == root {
					src.Kind, src.SourceID = unit.Of(o).Source, unit.Of(o).SourceID
					break
				}
			}
		}
		if src.Kind == "" {
			src.Kind = cargo.RootSource(g, root)
		}
		for _, c := range unit.TreeOf(g).Copies {
			if c.Root == root && c.Patch != "" {
				src.Patch = c.Patch
			}
		}
		rep.Sources = append(rep.Sources, src)
	}
	sort.Slice(rep.Sources, func(i, j int) bool { return rep.Sources[i].Root < rep.Sources[j].Root })
	if opt.AskCargo {
		pkgs, err := cargoMetadata(g.Workspace, opt.Env)
		if err != nil {
			rep.MetadataErr = err.Error()
		}
		for _, p := range pkgs {
			if p.Name == name && (version == "" || p.Version == version) {
				rep.Metadata = append(rep.Metadata, p)
			}
		}
	}
	// Roles.
	byRole := map[string][]*graph.Step{}
	var roles []string
	for _, s := range steps {
		if _, ok := byRole[unit.Of(s).Target]; !ok {
			roles = append(roles, unit.Of(s).Target)
		}
		byRole[unit.Of(s).Target] = append(byRole[unit.Of(s).Target], s)
	}
	sort.Slice(roles, func(i, j int) bool { return roleOrder(roles[i]) < roleOrder(roles[j]) })
	for _, target := range roles {
		units := byRole[target]
		sort.Slice(units, func(i, j int) bool {
			if units[i].ProfileDir != units[j].ProfileDir {
				return units[i].ProfileDir < units[j].ProfileDir
			}
			if units[i].Live() != units[j].Live() {
				return units[i].Live()
			}
			return unit.Of(units[i]).Hash < unit.Of(units[j]).Hash
		})
		role := Role{Target: target, Kind: unit.KindName(units[0].Kind)}
		for _, s := range units {
			v := Variant{Unit: unitName(s), Profile: s.ProfileDir, Version: stepVersion(g, s), Dir: unit.Of(s).FingerprintDir,
				Fields: l.fields(s), UsedBy: rootUses(s), Failed: s.Failed, Step: s}
			if v.UsedBy == nil {
				v.UsedBy = []RootUse{}
			}
			for _, d := range g.BuildDirs {
				if d.ProfileDir == s.ProfileDir && d.Hash == unit.Of(s).Hash && d.Package == s.Package {
					v.Dir, v.Bytes = d.Path, d.Bytes
				}
			}
			role.Variants = append(role.Variants, v)
		}
		role.Differ, role.Same = compare(role.Variants)
		rep.Roles = append(rep.Roles, role)
	}
	return rep, nil
}

func stepVersion(g *graph.Graph, s *graph.Step) string {
	if unit.Of(s).Version != "" {
		return unit.Of(s).Version
	}
	if root := cargo.UnitPackageRoot(g, s); root != "" {
		return cargo.ManifestVersion(root, g.Workspace)
	}
	return ""
}

func packageNames(g *graph.Graph) []string {
	m := map[string]bool{}
	for _, s := range g.Steps {
		m[s.Package] = true
	}
	return sortedKeys(m)
}

func roleOrder(target string) string {
	switch {
	case strings.HasPrefix(target, "lib-"):
		return "0" + target
	case strings.HasPrefix(target, "run-build-script-"):
		return "1" + target
	case strings.HasPrefix(target, "build-script-"):
		return "2" + target
	}
	return "3" + target
}

// fields reads a unit's configuration from its fingerprint JSON. A build-script run's own record holds
// only its rustflags, deps and local list (Cargo writes "" and 0 for the rest); its configuration
// (features, profile settings, compile kind) is its compile unit's, which the run depends on.
func (l *loader) fields(s *graph.Step) []Field {
	fp := l.fingerprint(s)
	out := []Field{{Name: "profile folder", Value: s.ProfileDir}}
	if fp == nil {
		return append(out, Field{Name: "fingerprint", Value: "unreadable"})
	}
	cfg := fp
	if s.Kind == graph.ScriptRun {
		for _, d := range s.Deps {
			if d.Kind == graph.ScriptCompile {
				if c := l.fingerprint(d); c != nil {
					cfg = c
				}
			}
		}
	}
	kind := "host"
	if cfg.CompileKind != 0 {
		kind = fmt.Sprintf("target %d", cfg.CompileKind)
		if i := strings.IndexByte(s.ProfileDir, '/'); i > 0 {
			kind = fmt.Sprintf("target %s (%d)", s.ProfileDir[:i], cfg.CompileKind)
		}
	}
	out = append(out,
		Field{Name: "features", Value: orEmptyList(cfg.Features)},
		Field{Name: "declared features", Value: orEmptyList(cfg.DeclaredFeatures)},
		Field{Name: "profile settings", Value: hashValue(cfg.Profile)},
		Field{Name: "rustflags", Value: quoteList(fp.Rustflags)},
		Field{Name: "compile kind", Value: kind},
		Field{Name: "rustc", Value: hashValue(pick(fp.Rustc, cfg.Rustc))},
		Field{Name: "target settings", Value: hashValue(cfg.Target)},
		Field{Name: "source path", Value: hashValue(cfg.Path)},
		Field{Name: "config", Value: hashValue(cfg.Config)},
	)
	// Dependencies: the hash each was built against, and the unit on disk that holds it.
	resolved := map[string]string{}
	for _, d := range s.Deps {
		if unit.Of(d).FingerprintHash != "" {
			resolved[unit.Of(d).FingerprintHash] = unitName(d)
		}
	}
	count := map[string]int{}
	for _, d := range fp.Deps {
		count[d.Name]++
	}
	for _, d := range fp.Deps {
		hx := cargo.HashHex(d.Hash)
		dep := resolved[hx]
		if dep == "" {
			dep = "no unit on disk"
		}
		name := "dep " + d.Name
		if count[d.Name] > 1 {
			name += fmt.Sprintf(" (%d)", d.PkgID)
		}
		out = append(out, Field{Name: name, Value: "hash " + hx + " → " + dep})
	}
	var watch []string
	for _, lf := range fp.Local {
		switch {
		case lf.RerunIfChanged != nil:
			watch = append(watch, "rerun-if-changed="+strings.Join(lf.RerunIfChanged.Paths, ","))
		case lf.RerunIfEnvChanged != nil:
			v := "unset"
			if lf.RerunIfEnvChanged.Val != nil {
				v = strconv.Quote(*lf.RerunIfEnvChanged.Val)
			}
			watch = append(watch, "rerun-if-env-changed="+lf.RerunIfEnvChanged.Var+" ("+v+")")
		case lf.Precalculated != nil:
			watch = append(watch, "Precalculated("+strconv.Quote(*lf.Precalculated)+")")
		}
	}
	if len(watch) > 0 {
		out = append(out, Field{Name: "watches", Value: strings.Join(watch, "; ")})
	}
	return out
}

func pick(a, b uint64) uint64 {
	if a != 0 {
		return a
	}
	return b
}

func orEmptyList(s string) string {
	if s == "" {
		return "[]"
	}
	return s
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, x := range l {
		q[i] = strconv.Quote(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// compare splits the fields of a role's variants into those that differ and those that are the same.
func compare(vs []Variant) (differ, same []Field) {
	var names []string
	seen := map[string]bool{}
	for _, v := range vs {
		for _, f := range v.Fields {
			if !seen[f.Name] {
				seen[f.Name] = true
				names = append(names, f.Name)
			}
		}
	}
	for _, n := range names {
		vals := make([]string, len(vs))
		all := true
		for i, v := range vs {
			vals[i] = "(none)"
			for _, f := range v.Fields {
				if f.Name == n {
					vals[i] = f.Value
				}
			}
			if vals[i] != vals[0] {
				all = false
			}
		}
		if all {
			same = append(same, Field{Name: n, Value: vals[0]})
		} else {
			differ = append(differ, Field{Name: n, Values: vals, Meaning: meaning(n)})
		}
	}
	return differ, same
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
