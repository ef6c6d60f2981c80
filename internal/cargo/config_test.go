package cargo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// classify: what a changed setting means for one program built with the dev profile on
// x86_64-unknown-linux-gnu, with feature "fast" and its code reading LEVEL.
func TestConfigClassify(t *testing.T) {
	base := configContext{profiles: map[string]bool{"dev": true}, features: map[string]bool{"default": true, "fast": true},
		envDeps: map[string]bool{"LEVEL": true}, host: "x86_64-unknown-linux-gnu"}
	own, member, cfg := base, base, base
	own.file, own.ownManifest, own.rootManifest = "/ws/Cargo.toml", true, true
	member.file, member.ownManifest = "/ws/m/Cargo.toml", true
	cfg.file = "/ws/.cargo/config.toml"
	for _, c := range []struct {
		ctx  *configContext
		key  string
		want configKind
	}{
		{&own, "profile.dev.opt-level", deciding},
		{&own, "profile.release.opt-level", inert},
		{&own, "profile.dev.package.*.opt-level", other},
		{&own, "profile.dev.build-override.opt-level", other},
		{&own, "profile.dev.incremental", other},
		{&member, "profile.dev.opt-level", inert}, // Cargo ignores a member's profiles
		{&cfg, "profile.dev.lto", deciding},
		{&own, "features.fast", deciding},
		{&own, "features.slow", inert},
		{&own, "package.version", deciding},
		{&own, "package.description", inert},
		{&own, "package.metadata.docs.rs", inert},
		{&cfg, "build.rustflags", deciding},
		{&cfg, "build.jobs", inert},
		{&cfg, "build.target", other},
		{&cfg, "target.x86_64-unknown-linux-gnu.rustflags", deciding},
		{&cfg, "target.x86_64-pc-windows-msvc.rustflags", inert},
		{&cfg, "target.cfg(unix).rustflags", other},
		{&cfg, "target.x86_64-unknown-linux-gnu.runner", inert},
		{&cfg, "env.LEVEL", deciding},
		{&cfg, "env.UNREAD", other},
		{&cfg, "alias.b", inert},
	} {
		// A setting that changed: its value at the build and now.
		was, now := map[string]string{c.key: `"1"`}, map[string]string{c.key: `"2"`}
		if got := c.ctx.classify(c.key, was, now); got != c.want {
			t.Errorf("%s in %s: %d, want %d", c.key, c.ctx.file, got, c.want)
		}
	}
	// An optional dependency is used only with a feature; RUSTFLAGS in the environment wins over the
	// configuration's.
	if got := own.classify("dependencies.x.version", map[string]string{"dependencies.x.optional": "true"}, nil); got != other {
		t.Errorf("optional dependency: %d", got)
	}
	if got := own.classify("dependencies.libc", nil, map[string]string{"dependencies.libc": `"0.2"`}); got != deciding {
		t.Errorf("a dependency added: %d", got)
	}
	if got := own.classify("dependencies.x.version", map[string]string{"dependencies.x.version": `"1"`}, map[string]string{"dependencies.x.version": `"1.2"`}); got != other {
		t.Errorf("a new requirement for a dependency it had: %d", got)
	}
	byEnv := cfg
	byEnv.rustflagsByEnv = true
	if got := byEnv.classify("build.rustflags", nil, nil); got != inert {
		t.Errorf("rustflags with RUSTFLAGS set: %d", got)
	}
}

// The store keeps what can decide a build, compactly, and a damaged entry tells nothing.
func TestConfigStoreCompact(t *testing.T) {
	keys := compactKeys(map[string]string{"package.metadata.big": strings.Repeat("x", 1<<20), "profile.dev.lto": "true",
		"dependencies.x.features": `"` + strings.Repeat("y", 4096) + `"`})
	if _, ok := keys["package.metadata.big"]; ok || keys["profile.dev.lto"] != "true" || !strings.HasPrefix(keys["dependencies.x.features"], "#blake3:") {
		t.Fatalf("compactKeys: %v", keys)
	}
	st := openConfigStore("")
	st.m["/ws/Cargo.toml"] = []configVersion{{MTimeNS: 1, Keys: nil}}
	if _, ok := st.before("/ws/Cargo.toml", 2); ok {
		t.Fatal("a version with no keys was taken as the settings of a build")
	}
}

// TestConfigEnv: the [env] tables of .cargo/config.toml from the workspace up, nearest first, in both
// forms; force and relative read; Cargo.toml and other tables left out.
func TestConfigEnv(t *testing.T) {
	top := t.TempDir()
	ws := filepath.Join(top, "ws")
	for p, body := range map[string]string{
		filepath.Join(top, ".cargo", "config.toml"): "[env]\nA = \"top\"\nB = \"top\"\n",
		filepath.Join(ws, ".cargo", "config.toml"):  "[env]\nA = \"near\"\nC = { value = \"c\", force = true }\nD = { value = \"data\", relative = true }\nF = { value = \"x/../y\", relative = true }\n[build]\njobs = 2\n",
		filepath.Join(ws, "Cargo.toml"):             "[package]\nname = \"x\"\nversion = \"0.1.0\"\n[env]\nE = \"not a config table\"\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &reader{l: &Layout{Workspace: ws}}
	got := r.configEnv()
	want := map[string]configEnvVar{"A": {value: "near"}, "B": {value: "top"}, "C": {value: "c", force: true},
		"D": {value: filepath.Join(ws, "data")}, "F": {value: ws + "/x/../y"}}
	if len(got) != len(want) {
		t.Fatalf("configEnv: %+v, want %+v", got, want)
	}
	for k, v := range want {
		v.file = got[k].file
		if got[k] != v {
			t.Errorf("%s: %+v, want %+v", k, got[k], v)
		}
	}
}

// An [env] setting written in another form, or with force on a variable the environment does not
// set, is the same setting to Cargo: no change; a value that differs is one.
func TestConfigEnvForms(t *testing.T) {
	cfg := configContext{file: "/ws/.cargo/config.toml", envDeps: map[string]bool{"FOO": true}}
	t.Setenv("SET_HERE", "env")
	for _, c := range []struct {
		name     string
		was, now map[string]string
		changed  bool
	}{
		{"table form", map[string]string{"env.FOO": `"a"`}, map[string]string{"env.FOO.value": `"a"`}, false},
		{"defaults spelt out", map[string]string{"env.FOO": `"a"`}, map[string]string{"env.FOO.value": `"a"`, "env.FOO.force": "false", "env.FOO.relative": "false"}, false},
		{"force, not set here", map[string]string{"env.FOO": `"a"`}, map[string]string{"env.FOO.value": `"a"`, "env.FOO.force": "true"}, false},
		{"another value", map[string]string{"env.FOO": `"a"`}, map[string]string{"env.FOO.value": `"b"`}, true},
		{"relative", map[string]string{"env.FOO": `"/ws/d"`}, map[string]string{"env.FOO.value": `"d"`, "env.FOO.relative": "true"}, false},
		{"not forced over the environment", map[string]string{"env.SET_HERE": `"a"`}, map[string]string{"env.SET_HERE": `"b"`}, false},
		{"forced over the environment", map[string]string{"env.SET_HERE": `"a"`}, map[string]string{"env.SET_HERE.value": `"a"`, "env.SET_HERE.force": "true"}, true},
	} {
		was, now := canonEnv(c.was), canonEnv(c.now)
		d, o := diffConfig(was, now, &cfg)
		if got := len(d)+len(o) > 0; got != c.changed {
			t.Errorf("%s: changed %v (deciding %v, other %v), want %v", c.name, got, d, o, c.changed)
		}
	}
}

// An [env] entry Cargo cannot load stops the check, naming it, as Cargo stops every build.
func TestCheckEnvTable(t *testing.T) {
	for _, c := range []struct {
		env  map[string]any
		want string
	}{
		{map[string]any{"A": "x", "B": map[string]any{"value": "y", "force": true, "relative": false}}, ""},
		{map[string]any{"A": int64(5)}, "[env] A must be a string or a table"},
		{map[string]any{"A": []any{"a"}}, "not an array"},
		{map[string]any{"A": map[string]any{"value": int64(1)}}, "[env] A needs a string value"},
		{map[string]any{"A": map[string]any{"value": "v", "force": "yes"}}, "[env] A.force must be true or false, not a string"},
	} {
		err := checkEnvTable(c.env)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v, want %q", c.env, err, c.want)
		}
	}
}
