package cargo

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/depfile"
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
	used  map[string]bool // the files this check read
	dirty bool
}

const configVersionsKept = 4

// maxConfigStore bounds the store's file, well under what a state file may be read at.
const maxConfigStore = 8 << 20

func openConfigStore(stateDir string) *configStore {
	st := &configStore{m: map[string][]configVersion{}, used: map[string]bool{}}
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
	for f := range st.m {
		if _, err := os.Stat(f); err != nil {
			delete(st.m, f) // a configuration file that is gone is read by no build
		}
	}
	data, err := json.Marshal(st.m)
	if err == nil && len(data) > maxConfigStore {
		// Past its bound (settings are kept compact, so only a great many workspaces get here): keep
		// the files this check read, and lose the other workspaces' baselines.
		for f := range st.m {
			if !st.used[f] {
				delete(st.m, f)
			}
		}
		data, err = json.Marshal(st.m)
	}
	if err != nil || len(data) > maxConfigStore {
		return
	}
	safeio.WriteBytesAtomic(st.path, safeio.WriteOptions{Replace: true, Perm: 0o600, MkdirPerm: 0o700}, data) // a failure costs a baseline
}

// keep records what file says while its mtime is mtime, unless that version is kept.
func (st *configStore) keep(file string, mtime int64, keys map[string]string) {
	st.used[file] = true
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
	st.used[file] = true
	vs := st.m[file]
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].MTimeNS <= ns {
			return vs[i], vs[i].Keys != nil // a damaged entry tells nothing
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
		// With both, Cargo reads the legacy .cargo/config (and warns that it does).
		if legacy := filepath.Join(dir, ".cargo", "config"); fileExists(legacy) {
			add(legacy)
		} else {
			add(filepath.Join(dir, ".cargo", "config.toml"))
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

// configKind is what a changed setting means for one program's build.
type configKind uint8

const (
	inert    configKind = iota // changes nothing Cargo builds for it (or Cargo ignores it here)
	other                      // may or may not: not known to decide
	deciding                   // Cargo redoes the program's unit for it
)

// configContext is what deciding whether a setting applies to one program needs.
type configContext struct {
	file           string // the configuration file
	ownManifest    bool   // the package's own Cargo.toml
	rootManifest   bool   // the workspace's root Cargo.toml (profiles are read from it alone)
	profiles       map[string]bool
	features       map[string]bool // the features the program's unit was built with; nil when unknown
	envDeps        map[string]bool // the variables the unit's code read (rustc's env-deps)
	host           string          // the target triple of the program's folder or of this machine
	rustflagsByEnv bool            // RUSTFLAGS or CARGO_ENCODED_RUSTFLAGS is set: config rustflags are not read
}

// profileSettings are the settings of a profile that its units' fingerprints hold: a change rebuilds
// them. The others (incremental, split-debuginfo, package and build-override tables) may or may not.
var profileSettings = map[string]bool{"opt-level": true, "debug": true, "debug-assertions": true, "overflow-checks": true,
	"lto": true, "panic": true, "codegen-units": true, "strip": true, "rpath": true, "inherits": true}

// inertKeys are the prefixes of settings that change no unit's build (what a package says of itself
// for people and registries, aliases, network and terminal settings, where outputs go).
var inertKeys = []string{"package.description", "package.authors", "package.license", "package.readme", "package.repository",
	"package.homepage", "package.documentation", "package.keywords", "package.categories", "package.publish",
	"package.metadata.", "workspace.metadata.", "badges.", "alias.", "net.", "http.", "term.", "registries.", "registry.",
	"credential", "cargo-new.", "doc.", "dev-dependencies.", "package.exclude", "package.include", "build.jobs",
	"build.target-dir", "build.build-dir", "cargo-new", "future-incompat-report.", "install.", "source.", "resolver.global-credential-providers"}

func hasPrefix(k string, prefixes []string) bool {
	for _, p := range prefixes {
		if k == strings.TrimSuffix(p, ".") || strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// classify says what a change of setting k (its values before and now) means for the program.
func (c *configContext) classify(k string, was, now map[string]string) configKind {
	if hasPrefix(k, inertKeys) {
		return inert
	}
	first, rest, _ := strings.Cut(k, ".")
	switch first {
	case "profile":
		if !c.rootManifest && (c.ownManifest || strings.HasSuffix(c.file, "Cargo.toml")) {
			return inert // Cargo ignores a profile outside the workspace's root manifest
		}
		name, setting, _ := strings.Cut(rest, ".")
		if !c.profiles[name] {
			return inert
		}
		if profileSettings[setting] {
			return deciding
		}
		return other
	case "env":
		name, _, _ := strings.Cut(rest, ".")
		if envEffective(was, name, c.file) == envEffective(now, name, c.file) {
			return inert // e.g. force = true on a variable this environment does not set
		}
		if c.envDeps[name] {
			return deciding
		}
		return other
	case "build":
		switch rest {
		case "rustflags":
			if c.rustflagsByEnv {
				return inert
			}
			return deciding
		}
		return other
	case "target":
		spec, setting, _ := strings.Cut(rest, ".")
		if strings.HasPrefix(spec, "cfg(") {
			return other
		}
		if spec != c.host {
			return inert // another platform's settings
		}
		if setting == "rustflags" && !c.rustflagsByEnv {
			return deciding
		}
		if setting == "runner" {
			return inert
		}
		return other
	}
	if !c.ownManifest {
		return other // another package's manifest (the workspace root's): whether the program uses it is not told here
	}
	switch first {
	case "features":
		if c.features == nil {
			return other
		}
		name, _, _ := strings.Cut(rest, ".")
		if c.features[name] {
			return deciding // a feature the program was built with: its meaning changed
		}
		return inert
	case "dependencies", "build-dependencies":
		dep, _, _ := strings.Cut(rest, ".")
		for _, m := range []map[string]string{was, now} {
			if m[first+"."+dep+".optional"] == "true" {
				return other // used only with a feature
			}
		}
		if hasDep(was, first+"."+dep) != hasDep(now, first+"."+dep) {
			return deciding // added or removed: the unit's dependencies differ
		}
		return other // a new requirement may resolve to the version the lock file already has
	case "package":
		switch rest {
		case "version", "edition", "build", "links":
			return deciding
		}
	}
	return other
}

// hasDep reports whether the flattened manifest m names the dependency key (`x = "1"` or an [x] table).
func hasDep(m map[string]string, key string) bool {
	if _, ok := m[key]; ok {
		return true
	}
	for k := range m {
		if strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

// diffConfig returns the keys whose values differ between was and now, split into those that decide
// the program's build and those not known to (inert ones left out).
func diffConfig(was, now map[string]string, c *configContext) (decide, oth []string) {
	seen := map[string]bool{}
	for _, m := range []map[string]string{was, now} {
		for k := range m {
			if seen[k] || was[k] == now[k] {
				continue
			}
			seen[k] = true
			switch c.classify(k, was, now) {
			case deciding:
				decide = append(decide, k)
			case other:
				oth = append(oth, k)
			}
		}
	}
	sort.Strings(decide)
	sort.Strings(oth)
	return decide, oth
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

// judgeConfig fills the ConfigChanges of every live root's unit: for each configuration file its build
// reads, what changed since the last cargo build of the program, judged against the version kept.
func (r *reader) judgeConfig() {
	st := openConfigStore(r.opt.StateDir)
	defer st.save()
	flat := map[string]map[string]string{} // read once per check
	filesOf := map[string][]string{}       // per package folder
	read := func(p string) (map[string]string, bool) {
		if m, ok := flat[p]; ok {
			return m, m != nil
		}
		m, err := flatConfig(p)
		if err != nil {
			m = nil
		} else {
			m = compactKeys(m)
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
		dRead := false
		// laterBuild moves last to the uplifted dep-info's mtime when that is newer: read only for a
		// file newer than the program, since a cargo build that finds nothing to do may rewrite it
		// (recording it would make every such build a verdict-cache miss).
		laterBuild := func() {
			if dRead {
				return
			}
			dRead = true
			if d := strings.TrimSuffix(root.File.Path, filepath.Ext(root.File.Path)) + ".d"; d != root.File.Path {
				if fi, err := fsrec.Stat(d); err == nil && fi.ModTime().UnixNano() > last {
					last = fi.ModTime().UnixNano()
				}
			}
		}
		files, ok := filesOf[s.PackageRoot]
		if !ok {
			files = configFiles(r.l.Workspace, s.PackageRoot, r.opt.CargoHome)
			filesOf[s.PackageRoot] = files
		}
		for _, p := range files {
			fi, err := fsrec.Stat(p)
			if err != nil {
				continue
			}
			mt := fi.ModTime().UnixNano()
			keys, ok := read(p)
			if !ok {
				continue // a manifest that does not decode fails the build itself
			}
			if mt > last {
				laterBuild()
			}
			if mt <= last {
				st.keep(p, mt, keys)
				continue
			}
			c := graph.ConfigChange{Path: p, MTimeNS: mt, BuiltNS: last}
			if was, ok := st.before(p, last); !ok {
				c.Unknown = true
			} else {
				before, now := canonEnv(was.Keys), canonEnv(keys)
				c.Deciding, c.Other = diffConfig(before, now, r.configContext(s, p, before, now))
				if len(c.Deciding)+len(c.Other) == 0 {
					continue // comments, layout, or settings that change no build
				}
			}
			u := unit.Of(s)
			if !slices.ContainsFunc(u.ConfigChanges, func(x graph.ConfigChange) bool { return x.Path == p }) {
				u.ConfigChanges = append(u.ConfigChanges, c)
			}
		}
	}
}

// configContext is what classifying the settings of file p for the program of root step s needs.
func (r *reader) configContext(s *graph.Step, p string, was, now map[string]string) *configContext {
	c := &configContext{
		file:           p,
		ownManifest:    p == filepath.Join(s.PackageRoot, "Cargo.toml"),
		rootManifest:   p == filepath.Join(r.l.Workspace, "Cargo.toml"),
		profiles:       buildProfiles(s.ProfileDir, was, now),
		envDeps:        map[string]bool{},
		host:           hostTriple(r.l),
		rustflagsByEnv: os.Getenv("RUSTFLAGS") != "" || os.Getenv("CARGO_ENCODED_RUSTFLAGS") != "",
	}
	if t := filepath.Base(filepath.Dir(s.ProfileDir)); strings.Count(t, "-") >= 2 {
		c.host = t // target/<triple>/<profile>: a build for that target
	}
	if u := unit.Of(s); !u.FeaturesUnknown {
		c.features = map[string]bool{}
		for _, f := range u.Features {
			c.features[f] = true
		}
	}
	for _, d := range r.depsListing(s.ProfileDir).byHash[unitKey(s)] {
		if strings.HasSuffix(d, ".d") {
			if f, err := depfile.ParseFile(d); err == nil {
				for k := range f.Env {
					c.envDeps[k] = true
				}
			}
		}
	}
	return c
}

// maxConfigValue bounds the text of one kept setting: a longer one is kept as its digest.
const maxConfigValue = 512

// compactKeys drops the settings that change no build (they need not be compared) and keeps long
// values as digests, so that the store stays small whatever the manifests hold.
func compactKeys(keys map[string]string) map[string]string {
	out := make(map[string]string, len(keys))
	for k, v := range keys {
		if hasPrefix(k, inertKeys) {
			continue
		}
		if len(v) > maxConfigValue {
			sum := fsrec.SumOf([]byte(v))
			v = "#blake3:" + hex.EncodeToString(sum[:])
		}
		out[k] = v
	}
	return out
}

// canonEnv gives the [env] entries of a file's flattened settings one form: NAME = "v" and
// [env.NAME] value = "v" (or NAME = { value = "v" }) are one setting to Cargo, and force or relative
// set to false are their defaults. Other settings are left as they are.
func canonEnv(keys map[string]string) map[string]string {
	out := make(map[string]string, len(keys))
	for k, v := range keys {
		if rest, ok := strings.CutPrefix(k, "env."); ok {
			name, field, _ := strings.Cut(rest, ".")
			switch field {
			case "value":
				k = "env." + name
			case "force", "relative":
				if v == "false" {
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}

// envEffective is the value a build here gives variable name by the [env] entries of keys (a file's
// settings, canonEnv's form), the file's path resolving relative ones: the entry's value, or this
// environment's when it sets the variable and the entry does not force; "\x00unset" for none.
func envEffective(keys map[string]string, name, file string) string {
	ev, inEnv := os.LookupEnv(name)
	raw, ok := keys["env."+name]
	if !ok {
		if inEnv {
			return ev
		}
		return "\x00unset"
	}
	if inEnv && keys["env."+name+".force"] != "true" {
		return ev
	}
	var v string
	if json.Unmarshal([]byte(raw), &v) != nil {
		return "\x00" + raw // kept as a digest, or not a string
	}
	if keys["env."+name+".relative"] == "true" {
		v = envRelative(file, v)
	}
	return v
}

// envRelative is an [env] value with relative = true, set in configuration file file: against the
// folder that holds the file's .cargo folder, joined as Cargo joins it (Rust's Path::join, which does
// not clean the path: x/../y stays as written); an absolute value as it is.
func envRelative(file, v string) string {
	if filepath.IsAbs(v) {
		return v
	}
	return strings.TrimSuffix(filepath.Dir(filepath.Dir(file)), "/") + "/" + v
}

// configEnvVar is one variable of the [env] tables of Cargo's configuration files.
type configEnvVar struct {
	value string
	force bool   // set even when the environment has it
	file  string // the configuration file whose table sets it
}

// configEnv is what the [env] tables of the configuration files a cargo build in the workspace reads
// (.cargo/config.toml from the workspace up, then $CARGO_HOME's; the nearest file wins) give the build's
// processes: NAME = "value", or { value = "...", force = true, relative = true } (relative: against
// the folder that holds the .cargo folder). A file that does not decode gives nothing (Cargo refuses it).
func (r *reader) configEnv() map[string]configEnvVar {
	out := map[string]configEnvVar{}
	if r.l.Workspace == "" {
		return out
	}
	for _, p := range configFiles(r.l.Workspace, r.l.Workspace, r.opt.CargoHome) {
		if filepath.Base(p) == "Cargo.toml" {
			continue
		}
		keys, err := flatConfig(p)
		if err != nil {
			continue
		}
		str := func(k string) (string, bool) {
			var v string
			if err := json.Unmarshal([]byte(keys[k]), &v); err != nil {
				return "", false
			}
			return v, true
		}
		for k := range keys {
			rest, ok := strings.CutPrefix(k, "env.")
			if !ok {
				continue
			}
			name, field, _ := strings.Cut(rest, ".")
			if _, seen := out[name]; seen || field != "" && field != "value" {
				continue
			}
			v, ok := str(k)
			if !ok {
				continue
			}
			e := configEnvVar{value: v, file: p}
			if field == "value" {
				e.force = keys["env."+name+".force"] == "true"
				if keys["env."+name+".relative"] == "true" {
					e.value = envRelative(p, v)
				}
			}
			out[name] = e
		}
	}
	return out
}
