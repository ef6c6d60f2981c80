package cargo

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// Cargo hands rustc a package's metadata as CARGO_PKG_* variables, from [package] of its Cargo.toml
// (or [workspace.package] for a field written `field.workspace = true`). rustc records the ones the
// code reads (env!) as env-deps in its dep-info, which Cargo keeps in the fingerprint's dep-info file;
// a Cargo.toml that now gives another value means the binary carries the old one, and Cargo rebuilds
// the unit. The version is not among them (it is part of the unit's hash, so a new version is a new unit).

// manifestCache reads each package manifest once per check, for the units read in parallel.
type manifestCache struct {
	mu sync.Mutex
	m  map[string]manifestEnvs
}

type manifestEnvs struct {
	env map[string]string
	err error
}

// env returns the CARGO_PKG_* values the manifest at path gives now (fields it cannot resolve, such
// as an inherited field without a workspace manifest, are left out).
func (c *manifestCache) env(path string) (map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.m[path]; ok {
		return r.env, r.err
	}
	env, err := readManifestEnv(path)
	if c.m == nil {
		c.m = map[string]manifestEnvs{}
	}
	c.m[path] = manifestEnvs{env, err}
	return env, err
}

// manifestFields maps [package] keys to the variables Cargo sets from them.
var manifestFields = map[string]string{
	"name": "CARGO_PKG_NAME", "description": "CARGO_PKG_DESCRIPTION", "homepage": "CARGO_PKG_HOMEPAGE",
	"repository": "CARGO_PKG_REPOSITORY", "license": "CARGO_PKG_LICENSE", "license-file": "CARGO_PKG_LICENSE_FILE",
	"rust-version": "CARGO_PKG_RUST_VERSION", "authors": "CARGO_PKG_AUTHORS", "version": "CARGO_PKG_VERSION",
}

func readManifestEnv(path string) (map[string]string, error) {
	var doc struct {
		Package map[string]any `toml:"package"`
	}
	if _, err := decodeTOMLMeta(path, &doc); err != nil {
		return nil, err
	}
	if doc.Package == nil {
		return nil, fmt.Errorf("no [package] table")
	}
	var ws map[string]any // [workspace.package] of the nearest workspace manifest above, read when needed
	wsRead := false
	env := map[string]string{}
	for key, name := range manifestFields {
		v, ok := doc.Package[key]
		if t, inherited := v.(map[string]any); inherited {
			if t["workspace"] != true {
				continue
			}
			if !wsRead {
				ws, wsRead = workspacePackage(filepath.Dir(path)), true
			}
			if v, ok = ws[key]; !ok {
				continue // not resolvable here: say nothing of it
			}
		}
		switch x := v.(type) {
		case nil:
			if ok {
				continue
			}
			env[name] = "" // an absent field is an empty variable
		case string:
			env[name] = x
		case []any:
			var parts []string
			for _, a := range x {
				if s, ok := a.(string); ok {
					parts = append(parts, s)
				}
			}
			env[name] = strings.Join(parts, ":")
		}
	}
	if v, ok := env["CARGO_PKG_VERSION"]; ok {
		core, pre, _ := strings.Cut(strings.SplitN(v, "+", 2)[0], "-")
		nums := strings.SplitN(core, ".", 3)
		for i, n := range []string{"CARGO_PKG_VERSION_MAJOR", "CARGO_PKG_VERSION_MINOR", "CARGO_PKG_VERSION_PATCH"} {
			if i < len(nums) {
				env[n] = nums[i]
			}
		}
		env["CARGO_PKG_VERSION_PRE"] = pre
	}
	return env, nil
}

// workspacePackage returns [workspace.package] of the nearest manifest above dir that has a
// [workspace] table (nil when none is found or readable).
func workspacePackage(dir string) map[string]any {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		var doc struct {
			Workspace *struct {
				Package map[string]any `toml:"package"`
			} `toml:"workspace"`
		}
		if _, err := decodeTOMLMeta(filepath.Join(d, "Cargo.toml"), &doc); err == nil && doc.Workspace != nil {
			return doc.Workspace.Package
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}
