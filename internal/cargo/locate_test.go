package cargo

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLocateWorkspaceAndTargetDir(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	write(t, filepath.Join(ws, "Cargo.toml"), "[workspace]\nmembers = [\"a\"]\n")
	write(t, filepath.Join(ws, "a", "Cargo.toml"), "[package]\nname = \"a\"\nversion = \"0.1.0\"\n")
	home := filepath.Join(root, "home")
	pkg := filepath.Join(ws, "a")
	base := map[string]string{"HOME": home}

	cases := []struct {
		name      string
		env       map[string]string
		opt       LocateOptions
		configs   map[string]string // path → content
		target    string
		build     string
		targetSrc string
	}{
		{name: "default", target: filepath.Join(ws, "target"), build: filepath.Join(ws, "target"), targetSrc: "default"},
		{name: "flag wins over env", env: map[string]string{"CARGO_TARGET_DIR": "/env/t"}, opt: LocateOptions{TargetDir: "/flag/t"},
			target: "/flag/t", build: "/flag/t", targetSrc: "--target-dir"},
		{name: "CARGO_TARGET_DIR over CARGO_BUILD_TARGET_DIR", env: map[string]string{"CARGO_TARGET_DIR": "/env/t", "CARGO_BUILD_TARGET_DIR": "/env/b"},
			target: "/env/t", build: "/env/t", targetSrc: "CARGO_TARGET_DIR"},
		{name: "relative env is relative to the working folder", env: map[string]string{"CARGO_BUILD_TARGET_DIR": "rel"}, opt: LocateOptions{Cwd: "/cwd"},
			target: "/cwd/rel", build: "/cwd/rel", targetSrc: "CARGO_BUILD_TARGET_DIR"},
		{name: "nearest config wins, relative to the folder holding .cargo",
			configs: map[string]string{
				filepath.Join(ws, ".cargo", "config.toml"):   "[build]\ntarget-dir = \"from-ws\"\n",
				filepath.Join(pkg, ".cargo", "config.toml"):  "[build]\ntarget-dir = \"from-pkg\"\n",
				filepath.Join(home, ".cargo", "config.toml"): "[build]\ntarget-dir = \"/from-home\"\n",
			},
			target: filepath.Join(pkg, "from-pkg"), build: filepath.Join(pkg, "from-pkg"), targetSrc: filepath.Join(pkg, ".cargo", "config.toml")},
		{name: "CARGO_HOME config is the last resort",
			configs: map[string]string{filepath.Join(home, ".cargo", "config.toml"): "[build]\ntarget-dir = \"/from-home\"\n"},
			target:  "/from-home", build: "/from-home", targetSrc: filepath.Join(home, ".cargo", "config.toml")},
		{name: "legacy .cargo/config", configs: map[string]string{filepath.Join(ws, ".cargo", "config"): "[build]\ntarget-dir = \"legacy\"\n"},
			target: filepath.Join(ws, "legacy"), build: filepath.Join(ws, "legacy"), targetSrc: filepath.Join(ws, ".cargo", "config")},
		{name: "build-dir template", configs: map[string]string{filepath.Join(ws, ".cargo", "config.toml"): "[build]\nbuild-dir = \"{workspace-root}/bd\"\n"},
			target: filepath.Join(ws, "target"), build: filepath.Join(ws, "bd"), targetSrc: "default"},
		{name: "CARGO_BUILD_BUILD_DIR", env: map[string]string{"CARGO_BUILD_BUILD_DIR": "/bd"},
			target: filepath.Join(ws, "target"), build: "/bd", targetSrc: "default"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []string{filepath.Join(ws, ".cargo"), filepath.Join(pkg, ".cargo"), filepath.Join(home, ".cargo")} {
				os.RemoveAll(p)
			}
			for p, c := range tc.configs {
				write(t, p, c)
			}
			e := map[string]string{}
			for k, v := range base {
				e[k] = v
			}
			for k, v := range tc.env {
				e[k] = v
			}
			tc.opt.Getenv = env(e)
			if tc.opt.Cwd == "" {
				tc.opt.Cwd = pkg
			}
			l, err := Locate(pkg, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if l.Workspace != ws || l.TargetDir != tc.target || l.BuildDir != tc.build || l.TargetDirSrc != tc.targetSrc {
				t.Fatalf("got workspace %s target %s (%s) build %s; want %s %s (%s) %s", l.Workspace, l.TargetDir, l.TargetDirSrc, l.BuildDir, ws, tc.target, tc.targetSrc, tc.build)
			}
		})
	}
}

func TestLocateBuildDirHashTemplateAsksForFlag(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "Cargo.toml"), "[package]\nname = \"a\"\nversion = \"0.1.0\"\n")
	write(t, filepath.Join(ws, ".cargo", "config.toml"), "[build]\nbuild-dir = \"{cargo-cache-home}/build/{workspace-path-hash}\"\n")
	_, err := Locate(ws, LocateOptions{Getenv: env(map[string]string{"HOME": ws}), Cwd: ws})
	if err == nil || !errorsIs(err, ErrBuildDirTemplate) {
		t.Fatalf("want ErrBuildDirTemplate, got %v", err)
	}
	l, err := Locate(ws, LocateOptions{Getenv: env(map[string]string{"HOME": ws}), Cwd: ws, BuildDir: "/given"})
	if err != nil || l.BuildDir != "/given" {
		t.Fatalf("--build-dir: %v %+v", err, l)
	}
}

func TestLocateBareTargetFolder(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55\n")
	l, err := Locate(dir, LocateOptions{Getenv: env(nil), Cwd: dir})
	if err != nil || l.Workspace != "" || l.TargetDir != dir {
		t.Fatalf("%v %+v", err, l)
	}
}
