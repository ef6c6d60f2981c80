package cargo

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// The configuration a build reads on every run.
//
// Cargo reads the manifests (the package's Cargo.toml, the workspace's) and its configuration files
// (.cargo/config.toml in the folder it runs in and every folder above, $CARGO_HOME/config.toml) on
// every build, and compares what they say (the profile, the features, the flags, the environment
// they set) with what each unit's fingerprint records: an edit of `[profile.release] lto` or
// `rustflags` rebuilds every unit with no source touched. None of these files is an input Cargo
// watches by mtime, so what the binary on disk was built with is told by content: the settings a file
// held when the binary was last built are kept (flattened to dotted keys, comments and layout left
// out), and an edit since, with no cargo build of the program after it, is judged by the keys that
// differ: one that decides how a unit is built (a profile's setting, a feature, a dependency, a flag,
// the environment) means the next build redoes it; others (a package's description, an alias) do
// not; an edit with nothing kept to compare with cannot be told.
//
// "The last cargo build of a program" is the mtime of its uplifted dep-info (target/<profile>/<bin>.d),
// which every cargo build that builds the program rewrites, Fresh or not; the program's own mtime
// when there is none.

// ConfigFile is the file of the state folder that keeps the settings (ConfigStore).
const ConfigFile = "cargo-config.v1.json"

// configVersion is what one configuration file said while its mtime was MTimeNS.
type configVersion struct {
	MTimeNS int64             `json:"mtime_ns"`
	Keys    map[string]string `json:"keys"`
}

// configStore keeps, per configuration file, the last few versions seen while no build had yet read
// a newer one.
type configStore struct {
	path  string
	m     map[string][]configVersion
	dirty bool
}

const configVersionsKept = 4

func openConfigStore(stateDir string) *configStore {
	st := &configStore{m: map[string][]configVersion{}}
	if stateDir == "" {
		return st
	}
	st.path = filepath.Join(stateDir, ConfigFile)
	if data, err := safeio.ReadFile(st.path, safeio.MaxRecord); err == nil {
		var m map[string][]configVersion
		if json.Unmarshal(data, &m) == nil && m != nil {
			st.m = m
		}
	}
	return st
}

func (st *configStore) save() {
	if st.path == "" || !st.dirty {
		return
	}
	data, err := json.Marshal(st.m)
	if err != nil {
		return
	}
	safeio.WriteBytesAtomic(st.path, safeio.WriteOptions{Replace: true, Perm: 0o600, MkdirPerm: 0o700}, data) // a failure costs a baseline
}

// keep records what file says while its mtime is mtime, unless that version is kept.
func (st *configStore) keep(file string, mtime int64, keys map[string]string) {
	vs := st.m[file]
	for _, v := range vs {
		if v.MTimeNS == mtime {
			return
		}
	}
	vs = append(vs, configVersion{MTimeNS: mtime, Keys: keys})
	sort.Slice(vs, func(i, j int) bool { return vs[i].MTimeNS < vs[j].MTimeNS })
	if len(vs) > configVersionsKept {
		vs = vs[len(vs)-configVersionsKept:]
	}
	st.m[file], st.dirty = vs, true
}

// before returns the newest kept version of file whose mtime is not after ns: what a build at ns read.
func (st *configStore) before(file string, ns int64) (configVersion, bool) {
	vs := st.m[file]
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].MTimeNS <= ns {
			return vs[i], true
		}
	}
	return configVersion{}, false
}

// configFiles are the configuration files a cargo build in the workspace ws reads for a package in
// folder pkg: its manifest, the workspace's, and every .cargo/config.toml (or legacy .cargo/config) from
// ws up, then $CARGO_HOME's; those that exist.
func configFiles(ws, pkg, cargoHome string) []string {
	var out []string
	add := func(p string) {
		if st, err := fsrec.Stat(p); err == nil && st.Mode().IsRegular() && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	add(filepath.Join(pkg, "Cargo.toml"))
	add(filepath.Join(ws, "Cargo.toml"))
	for dir := ws; ; dir = filepath.Dir(dir) {
		if cfg := filepath.Join(dir, ".cargo", "config.toml"); fileExists(cfg) {
			add(cfg)
		} else {
			add(filepath.Join(dir, ".cargo", "config"))
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if cargoHome != "" {
		add(filepath.Join(cargoHome, "config.toml"))
	}
	return out
}

func fileExists(p string) bool { _, err := fsrec.Stat(p); return err == nil }

// flatConfig reads a TOML file into dotted keys ("profile.release.lto") with their values as JSON:
// comments and layout are not settings.
func flatConfig(path string) (map[string]string, error) {
	data, err := safeio.ReadFile(path, safeio.MaxRecord)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, x := range m {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, x)
			}
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte("?")
		}
		out[prefix] = string(b)
	}
	walk("", doc)
	return out, nil
}

// decidingKeys are the prefixes of the settings that decide how Cargo builds a unit (a change of one
// makes it redo the units it applies to): profiles, features, dependencies and targets of a manifest,
// the workspace's shared dependencies and package fields, patches; flags, targets and environment of
// a configuration file.
var decidingKeys = []string{"profile.", "features.", "dependencies.", "build-dependencies.", "target.", "lib.", "bin.",
	"package.version", "package.edition", "package.build", "package.links", "workspace.dependencies.", "workspace.package.",
	"patch.", "replace.", "build.rustflags", "build.target", "build.rustc", "env.", "unstable."}

// inertKeys are the prefixes of settings that change no unit's build (what a package says of itself
// for people and registries, aliases, network and terminal settings).
var inertKeys = []string{"package.description", "package.authors", "package.license", "package.readme", "package.repository",
	"package.homepage", "package.documentation", "package.keywords", "package.categories", "package.publish",
	"package.metadata.", "workspace.metadata.", "badges.", "alias.", "net.", "http.", "term.", "registries.", "registry.",
	"credential", "cargo-new.", "doc.", "dev-dependencies.", "package.exclude", "package.include"}

func hasPrefix(k string, prefixes []string) bool {
	for _, p := range prefixes {
		if k == strings.TrimSuffix(p, ".") || strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// buildProfiles are the profiles whose settings decide how the units of a profile folder are built:
// the folder's own profile (debug/ holds dev's units, release/ release's, any other folder the custom
// profile of its name) and those it inherits from (`inherits`, as now or as at the build). A change to
// [profile.release] leaves a debug build alone.
func buildProfiles(profileDir string, was, now map[string]string) map[string]bool {
	name := filepath.Base(profileDir)
	switch name {
	case "debug":
		name = "dev"
	}
	out := map[string]bool{}
	for n := name; n != "" && !out[n]; {
		out[n] = true
		next := ""
		for _, m := range []map[string]string{now, was} {
			var v string
			if json.Unmarshal([]byte(m["profile."+n+".inherits"]), &v) == nil && v != "" && !out[v] {
				next = v
				break
			}
		}
		n = next
	}
	return out
}

// diffConfig returns the keys whose values differ between was and now, split into those that decide
// a build of the given profiles and those not known to (inert ones, and other profiles', left out).
func diffConfig(was, now map[string]string, profiles map[string]bool) (decide, other []string) {
	seen := map[string]bool{}
	for _, m := range []map[string]string{was, now} {
		for k := range m {
			if seen[k] || was[k] == now[k] {
				continue
			}
			seen[k] = true
			if rest, ok := strings.CutPrefix(k, "profile."); ok {
				if name, _, _ := strings.Cut(rest, "."); !profiles[name] {
					continue
				}
			}
			switch {
			case hasPrefix(k, decidingKeys):
				decide = append(decide, k)
			case !hasPrefix(k, inertKeys):
				other = append(other, k)
			}
		}
	}
	sort.Strings(decide)
	sort.Strings(other)
	return decide, other
}

// judgeConfig fills the ConfigChanges of every live root's unit: for each configuration file its build
// reads, what changed since the last cargo build of the program, judged against the version kept.
func (r *reader) judgeConfig() {
	st := openConfigStore(r.opt.StateDir)
	defer st.save()
	flat := map[string]map[string]string{} // read once per check
	read := func(p string) (map[string]string, bool) {
		if m, ok := flat[p]; ok {
			return m, m != nil
		}
		m, err := flatConfig(p)
		if err != nil {
			m = nil
		}
		flat[p] = m
		return m, m != nil
	}
	for _, root := range r.g.Roots {
		s := root.Step
		if s == nil || !s.PathPackage || s.PackageRoot == "" || !s.Live() {
			continue
		}
		last := root.File.MTimeNS
		if d := strings.TrimSuffix(root.File.Path, filepath.Ext(root.File.Path)) + ".d"; d != root.File.Path {
			if fi, err := fsrec.Stat(d); err == nil && fi.ModTime().UnixNano() > last {
				last = fi.ModTime().UnixNano()
			}
		}
		for _, p := range configFiles(r.l.Workspace, s.PackageRoot, r.opt.CargoHome) {
			fi, err := fsrec.Stat(p)
			if err != nil {
				continue
			}
			mt := fi.ModTime().UnixNano()
			keys, ok := read(p)
			if !ok {
				continue // a manifest that does not decode fails the build itself
			}
			if mt <= last {
				st.keep(p, mt, keys)
				continue
			}
			c := graph.ConfigChange{Path: p, MTimeNS: mt, BuiltNS: last}
			if was, ok := st.before(p, last); !ok {
				c.Unknown = true
			} else if c.Deciding, c.Other = diffConfig(was.Keys, keys, buildProfiles(s.ProfileDir, was.Keys, keys)); len(c.Deciding)+len(c.Other) == 0 {
				continue // comments, layout, or settings that change no build
			}
			u := unit.Of(s)
			if !slices.ContainsFunc(u.ConfigChanges, func(x graph.ConfigChange) bool { return x.Path == p }) {
				u.ConfigChanges = append(u.ConfigChanges, c)
			}
		}
	}
}
