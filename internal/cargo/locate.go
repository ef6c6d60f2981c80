package cargo

import (
	"errors"
	"fmt"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// Layout says where a workspace's build records are, and how each folder was decided.
type Layout struct {
	Workspace    string // workspace root (folder of the root Cargo.toml); "" when PATH was a bare target folder
	TargetDir    string // where uplifted artifacts live (`target/`)
	BuildDir     string // where intermediates live (`.fingerprint`, `build`, `deps`); equals TargetDir by default
	TargetDirSrc string // e.g. "default", "--target-dir", "CARGO_TARGET_DIR", "/ws/.cargo/config.toml"
	BuildDirSrc  string
}

// LocateOptions are the command-line overrides and the environment to read.
type LocateOptions struct {
	TargetDir string // --target-dir
	BuildDir  string // --build-dir
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Cwd resolves relative environment paths, as Cargo does; "" means os.Getwd.
	Cwd string
}

// ErrBuildDirTemplate is returned when build.build-dir uses a template only Cargo can expand.
var ErrBuildDirTemplate = errors.New("build.build-dir uses {workspace-path-hash}, which only Cargo can compute: pass --build-dir with the folder")

// Locate finds the Cargo workspace at or above path and its target and build folders the way Cargo
// 1.95 does: --target-dir, then CARGO_TARGET_DIR, then CARGO_BUILD_TARGET_DIR, then build.target-dir
// in the nearest `.cargo/config.toml` (or legacy `.cargo/config`) from path upward, then in
// $CARGO_HOME/config.toml, else <workspace>/target. The build folder likewise from --build-dir,
// CARGO_BUILD_BUILD_DIR and build.build-dir (templates {workspace-root} and {cargo-cache-home} are
// expanded), else the target folder. Relative config paths are relative to the folder holding `.cargo`.
//
// When no Cargo.toml lies at or above path but path itself is a target folder (it holds
// `.rustc_info.json` or `CACHEDIR.TAG`), it is used with no workspace.
func Locate(path string, opt LocateOptions) (*Layout, error) {
	getenv := opt.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	cwd := opt.Cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, path)
	}
	abs = filepath.Clean(abs)
	st, err := fsrec.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", abs, errors.Unwrap(err))
	}
	start := abs
	if !st.IsDir() {
		start = filepath.Dir(abs)
	}
	l := &Layout{}
	ws, err := findWorkspace(start)
	if err != nil {
		return nil, err
	}
	if ws == "" {
		switch {
		case opt.TargetDir != "":
			// No workspace, but the folders were named: read them as they are.
			l.TargetDir, l.TargetDirSrc = absFrom(cwd, opt.TargetDir), "--target-dir"
			l.BuildDir, l.BuildDirSrc = l.TargetDir, "the target folder"
			if opt.BuildDir != "" {
				l.BuildDir, l.BuildDirSrc = absFrom(cwd, opt.BuildDir), "--build-dir"
			}
			return l, nil
		case isTargetDir(start):
			l.TargetDir, l.BuildDir = start, start
			l.TargetDirSrc, l.BuildDirSrc = "the path given", "the path given"
			return l, nil
		}
		return nil, fmt.Errorf("no Cargo.toml at or above %s, and it is not a Cargo target folder (name one with --target-dir)", abs)
	}
	l.Workspace = ws
	cfg, err := readConfigs(start, getenv)
	if err != nil {
		return nil, err
	}

	relEnv := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(cwd, p)
	}
	switch {
	case opt.TargetDir != "":
		l.TargetDir, l.TargetDirSrc = relEnv(opt.TargetDir), "--target-dir"
	case getenv("CARGO_TARGET_DIR") != "":
		l.TargetDir, l.TargetDirSrc = relEnv(getenv("CARGO_TARGET_DIR")), "CARGO_TARGET_DIR"
	case getenv("CARGO_BUILD_TARGET_DIR") != "":
		l.TargetDir, l.TargetDirSrc = relEnv(getenv("CARGO_BUILD_TARGET_DIR")), "CARGO_BUILD_TARGET_DIR"
	case cfg.targetDir.value != "":
		l.TargetDir, l.TargetDirSrc = cfg.targetDir.resolve(), cfg.targetDir.file
	default:
		l.TargetDir, l.TargetDirSrc = filepath.Join(ws, "target"), "default"
	}
	cargoHome := getenv("CARGO_HOME")
	if cargoHome == "" {
		cargoHome = filepath.Join(homeDir(getenv), ".cargo")
	}
	expand := func(v string) (string, error) {
		if strings.Contains(v, "{workspace-path-hash}") {
			return "", ErrBuildDirTemplate
		}
		v = strings.ReplaceAll(v, "{workspace-root}", ws)
		v = strings.ReplaceAll(v, "{cargo-cache-home}", cargoHome)
		return v, nil
	}
	switch {
	case opt.BuildDir != "":
		l.BuildDir, l.BuildDirSrc = relEnv(opt.BuildDir), "--build-dir"
	case getenv("CARGO_BUILD_BUILD_DIR") != "":
		v, err := expand(getenv("CARGO_BUILD_BUILD_DIR"))
		if err != nil {
			return nil, fmt.Errorf("CARGO_BUILD_BUILD_DIR: %w", err)
		}
		l.BuildDir, l.BuildDirSrc = relEnv(v), "CARGO_BUILD_BUILD_DIR"
	case cfg.buildDir.value != "":
		v, err := expand(cfg.buildDir.value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.buildDir.file, err)
		}
		cfg.buildDir.value = v
		l.BuildDir, l.BuildDirSrc = cfg.buildDir.resolve(), cfg.buildDir.file
	default:
		l.BuildDir, l.BuildDirSrc = l.TargetDir, "the target folder"
	}
	return l, nil
}

func homeDir(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// TargetDirAbove returns the Cargo target folder (one holding .rustc_info.json or CACHEDIR.TAG) that
// is dir or one of the up folders above it ("" when none is): where a program in target/release,
// target/debug/examples or target/<triple>/release lies.
func TargetDirAbove(dir string, up int) string {
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for i := 0; i <= up; i++ {
		if isTargetDir(d) {
			return d
		}
		p := filepath.Dir(d)
		if p == d {
			break
		}
		d = p
	}
	return ""
}

func isTargetDir(dir string) bool {
	for _, n := range []string{".rustc_info.json", "CACHEDIR.TAG"} {
		if _, err := fsrec.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// findWorkspace returns the workspace root for a start folder: the nearest Cargo.toml at or above it,
// then, further up, the nearest Cargo.toml with a [workspace] table (Cargo's search; membership
// globs are not checked). "" when there is no Cargo.toml at all.
func findWorkspace(start string) (string, error) {
	pkg := ""
	for dir := start; ; dir = filepath.Dir(dir) {
		m := filepath.Join(dir, "Cargo.toml")
		if data, err := safeio.ReadFile(m, safeio.MaxRecord); err == nil {
			if pkg == "" {
				pkg = dir
			}
			var doc map[string]any
			if err := toml.Unmarshal(data, &doc); err != nil {
				if dir == pkg {
					return "", fmt.Errorf("%s: %w", m, err)
				}
			} else if _, ok := doc["workspace"]; ok {
				return dir, nil
			}
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return pkg, nil
}

type cfgValue struct {
	value string
	file  string // the config file that set it
}

func (c cfgValue) resolve() string {
	if filepath.IsAbs(c.value) {
		return filepath.Clean(c.value)
	}
	// Relative to the folder that holds the .cargo folder.
	return filepath.Join(filepath.Dir(filepath.Dir(c.file)), c.value)
}

type cargoConfig struct {
	targetDir, buildDir cfgValue
}

// readConfigs merges build.target-dir and build.build-dir from the config files Cargo reads, the
// nearest file winning. A config file that cannot be read or parsed is an error naming it, as in Cargo.
func readConfigs(start string, getenv func(string) string) (cargoConfig, error) {
	var files []string
	seen := map[string]bool{}
	for dir := start; ; dir = filepath.Dir(dir) {
		for _, n := range []string{"config.toml", "config"} {
			p := filepath.Join(dir, ".cargo", n)
			if st, err := fsrec.Stat(p); err == nil && !st.IsDir() {
				files = append(files, p)
				seen[p] = true
				break
			}
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	home := getenv("CARGO_HOME")
	if home == "" {
		home = filepath.Join(homeDir(getenv), ".cargo")
	}
	for _, n := range []string{"config.toml", "config"} {
		p := filepath.Join(home, n)
		if _, err := fsrec.Stat(p); err == nil {
			if !seen[p] {
				files = append(files, p)
			}
			break
		}
	}
	var c cargoConfig
	// files are nearest first; the first file that sets a key wins.
	for _, f := range files {
		var doc struct {
			Build struct {
				TargetDir any `toml:"target-dir"`
				BuildDir  any `toml:"build-dir"`
			} `toml:"build"`
			Env map[string]any `toml:"env"`
		}
		if err := decodeTOML(f, &doc); err != nil {
			// Cargo refuses to build with a broken config; say so rather than guess around it.
			return c, fmt.Errorf("%s: %w", f, err)
		}
		if err := checkEnvTable(doc.Env); err != nil {
			return c, fmt.Errorf("%s: %w", f, err)
		}
		for _, kv := range []struct {
			key string
			val any
			dst *cfgValue
		}{{"build.target-dir", doc.Build.TargetDir, &c.targetDir}, {"build.build-dir", doc.Build.BuildDir, &c.buildDir}} {
			if kv.val == nil {
				continue
			}
			v, ok := kv.val.(string)
			if !ok {
				return c, fmt.Errorf("%s: %s must be a string, not %T", f, kv.key, kv.val)
			}
			if kv.dst.value == "" && v != "" {
				*kv.dst = cfgValue{v, f}
			}
		}
	}
	return c, nil
}

// checkEnvTable reports an [env] entry Cargo cannot load (it then refuses every build: "could not load
// config key env.NAME"): each is a string, or a table with a string value and, optionally, force and
// relative as booleans.
func checkEnvTable(env map[string]any) error {
	names := make([]string, 0, len(env))
	for n := range env {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		switch v := env[n].(type) {
		case string:
			continue
		case map[string]any:
			if _, ok := v["value"].(string); !ok {
				return fmt.Errorf("[env] %s needs a string value (value = \"...\"), not %s: Cargo cannot load config key env.%s", n, tomlType(v["value"]), n)
			}
			for _, opt := range []string{"force", "relative"} {
				if x, set := v[opt]; set {
					if _, ok := x.(bool); !ok {
						return fmt.Errorf("[env] %s.%s must be true or false, not %s: Cargo cannot load config key env.%s", n, opt, tomlType(x), n)
					}
				}
			}
		default:
			return fmt.Errorf("[env] %s must be a string or a table { value = \"...\" }, not %s: Cargo cannot load config key env.%s", n, tomlType(v), n)
		}
	}
	return nil
}

// tomlType names a decoded TOML value's type in TOML's words.
func tomlType(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}

// decodeTOML reads a TOML file (a regular file of bounded size) into v.
func decodeTOML(path string, v any) error {
	data, err := safeio.ReadFile(path, safeio.MaxRecord)
	if err != nil {
		return err
	}
	_, err = toml.Decode(string(data), v)
	return err
}

func absFrom(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}
