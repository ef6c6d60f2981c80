package cargo

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/kvfile"
)

// The read cache answers as a fresh read does, survives a save and a reload, and never hides a change:
// an archive or manifest rewritten in place with its size and mtime kept (cp -p, tar) has a new ctime,
// so a new key, and is read again; a file changed within the racy window is not cached.
func TestReadCacheNeverHidesAChange(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) to build a real archive")
	}
	if _, err := exec.LookPath("ar"); err != nil {
		t.Skip("no ar to build a real archive")
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	src := filepath.Join(dir, "kit.c")
	if err := os.WriteFile(src, []byte("int kit(int x) { return x * 3; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	obj, lib := filepath.Join(dir, "kit.o"), filepath.Join(dir, "libkit.a")
	for _, args := range [][]string{{"cc", "-g", "-c", src, "-o", obj}, {"ar", "rcs", lib, obj}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	manifest := filepath.Join(dir, "Cargo.toml")
	if err := os.WriteFile(manifest, []byte("[package]\nname = \"kit\"\nversion = \"1.0.0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(c func() time.Time) { nativeClock = c }(nativeClock)

	// Just written: racy, so nothing is cached.
	c := openNativeCache(state)
	if _, _, err := c.evidence(lib); err != nil {
		t.Fatal(err)
	}
	if len(c.m) != 0 {
		t.Fatalf("an archive written just now was cached (%d entries)", len(c.m))
	}
	nativeClock = func() time.Time { return time.Now().Add(3 * time.Second) }

	wantM, wantC, err := archiveEvidence(lib)
	if err != nil || len(wantC) == 0 {
		t.Fatalf("archiveEvidence = %v, %v, %v; want compile units", wantM, wantC, err)
	}
	cmpOpt := cmp.AllowUnexported(memberInfo{}, cuSources{}, cuUnit{})
	gotM, gotC, err := c.evidence(lib)
	if err != nil || !cmp.Equal(gotM, wantM, cmpOpt) || !cmp.Equal(gotC, wantC, cmpOpt) {
		t.Fatalf("first read through the cache differs: %v", cmp.Diff(wantC, gotC, cmpOpt))
	}
	if v, err := c.manifestVersion(dir, ""); err != nil || v != "1.0.0" {
		t.Fatalf("manifestVersion = %q, %v", v, err)
	}
	c.save()
	c = openNativeCache(state)
	if a, v := c.count(kindArchive), c.count(kindVersion); a != 1 || v != 1 {
		t.Fatalf("reloaded cache holds %d archives and %d versions, want 1 and 1", a, v)
	}
	gotM, gotC, err = c.evidence(lib)
	if err != nil || !cmp.Equal(gotM, wantM, cmpOpt) || !cmp.Equal(gotC, wantC, cmpOpt) {
		t.Fatalf("cached answer differs: %v", cmp.Diff(wantC, gotC, cmpOpt))
	}

	// In-place rewrites keeping size and mtime.
	rewrite := func(p string, data []byte) {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // past the file system's timestamp tick
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	junk, _ := os.ReadFile(lib)
	for i := range junk {
		junk[i] = 'x'
	}
	rewrite(lib, junk)
	if _, _, err := c.evidence(lib); err == nil {
		t.Errorf("an archive overwritten with junk (size and mtime kept) was answered from the cache")
	}
	rewrite(manifest, []byte("[package]\nname = \"kit\"\nversion = \"2.0.0\"\n"))
	if v, err := c.manifestVersion(dir, ""); err != nil || v != "2.0.0" {
		t.Errorf("manifest rewritten to 2.0.0 (size and mtime kept) reads %q, %v", v, err)
	}
	// A version inherited from the workspace depends on another file: never cached.
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, "m"), 0o755)
	os.WriteFile(filepath.Join(ws, "Cargo.toml"), []byte("[workspace]\n[workspace.package]\nversion = \"3.0.0\"\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "m", "Cargo.toml"), []byte("[package]\nname = \"m\"\nversion.workspace = true\n"), 0o644)
	n := len(c.versions)
	if v, err := c.manifestVersion(filepath.Join(ws, "m"), ws); err != nil || v != "3.0.0" || len(c.versions) != n {
		t.Errorf("inherited version = %q, %v; cached entries %d -> %d", v, err, n, len(c.versions))
	}
}

// An executable's DWARF unit names come from the cache as a fresh read gives them, after a save and a
// reload; a rebuilt executable (new key) is read again; one written within the racy window is not kept.
func TestReadCacheUnitNames(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) to build a real executable")
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	src, bin := filepath.Join(dir, "main.c"), filepath.Join(dir, "app")
	build := func(body string) {
		t.Helper()
		if err := os.WriteFile(src, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cc", "-g", src, "-o", bin).CombinedOutput(); err != nil {
			t.Fatalf("cc: %v\n%s", err, out)
		}
	}
	build("int main(void) { return 0; }\n")
	defer func(c func() time.Time) { nativeClock = c }(nativeClock)

	c := openNativeCache(state)
	names, f, err := c.unitNames(bin)
	if f != nil {
		f.Close()
	}
	if err != nil || len(names) == 0 || names[0][0] == "" {
		t.Fatalf("unitNames of a fresh executable = %v, %v; want its compile units", names, err)
	}
	if len(c.units) != 0 {
		t.Fatal("an executable written just now was cached")
	}
	nativeClock = func() time.Time { return time.Now().Add(3 * time.Second) }
	fresh, f, err := c.unitNames(bin)
	if f == nil || err != nil {
		t.Fatalf("the second read: file %v, error %v (want a read of the file, kept)", f, err)
	}
	f.Close()
	c.save()
	c2 := openNativeCache(state)
	cached, f, err := c2.unitNames(bin)
	if f != nil || err != nil {
		t.Fatalf("after a reload: file %v, error %v (want the cache's answer)", f, err)
	}
	if d := cmp.Diff(fresh, cached); d != "" {
		t.Fatalf("the cache's unit names differ from a read's (-read +cache):\n%s", d)
	}
	// Rebuilt from another source: read again, the new names.
	if err := os.Rename(src, filepath.Join(dir, "other.c")); err != nil {
		t.Fatal(err)
	}
	src = filepath.Join(dir, "other.c")
	build("int main(void) { return 1; }\n")
	again, f, err := c2.unitNames(bin)
	if f == nil || err != nil {
		t.Fatalf("a rebuilt executable was answered from the cache (error %v)", err)
	}
	f.Close()
	if len(again) == 0 || filepath.Base(again[0][0]) != "other.c" {
		t.Errorf("after the rebuild: %v, want other.c", again)
	}
}

// The files an executable's line tables name under the tree it was built in come from the cache as a
// read of the file gives them, after a save and a reload, and from the file again once it is rebuilt.
func TestReadCacheTreeFiles(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) to build a real executable")
	}
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	if err := os.Mkdir(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	state, bin := filepath.Join(dir, "state"), filepath.Join(dir, "app")
	build := func(body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(tree, "main.c"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("cc", "-g", "main.c", "-o", bin)
		cmd.Dir = tree // the unit's comp_dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cc: %v\n%s", err, out)
		}
	}
	build("int main(void) { return 0; }\n")
	defer func(c func() time.Time) { nativeClock = c }(nativeClock)
	nativeClock = func() time.Time { return time.Now().Add(3 * time.Second) }

	c := openNativeCache(state)
	if _, f, err := c.unitNames(bin); err != nil || f == nil {
		t.Fatalf("unitNames: file %v, error %v", f, err)
	} else {
		f.Close()
	}
	read := c.treeFiles(bin, tree, nil)
	if !slices.Contains(read, filepath.Join(tree, "main.c")) {
		t.Fatalf("treeFiles = %v, want %s among them", read, filepath.Join(tree, "main.c"))
	}
	c.save()
	c2 := openNativeCache(state)
	if d := cmp.Diff(read, c2.treeFiles(bin, tree, nil)); d != "" {
		t.Fatalf("after a reload (-read +cache):\n%s", d)
	}
	// The answer is the cache's: a marker put in its entry comes back.
	for _, e := range c2.units {
		e.Trees[tree] = []string{"marker"}
	}
	if got := c2.treeFiles(bin, tree, nil); !slices.Equal(got, []string{"marker"}) {
		t.Fatalf("treeFiles after the marker = %v: not answered from the cache", got)
	}
	build("int main(void) { return 1; }\n")
	if got := c2.treeFiles(bin, tree, nil); !slices.Contains(got, filepath.Join(tree, "main.c")) {
		t.Errorf("after a rebuild: %v, want a read of the file", got)
	}
}

// A units entry of the wrong shape in the file ([name] alone, three strings, null) answers for no
// executable: encoding/json would pad or cut it into a unit that is not there (a newcomer's attack).
func TestReadCacheUnitNamesShape(t *testing.T) {
	state := t.TempDir()
	c := openNativeCache(state)
	k := digest.Key{Size: 1}
	c.units[k] = &unitsEntry{Key: k, Units: []unitName{{"src/main.rs", "/w"}}, used: true}
	c.dirty = true
	c.save()
	raw, _, err := kvfile.Read(c.path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	good := `[["src/main.rs","/w"]]`
	if !strings.Contains(string(raw[recordKey(kindUnits, k)]), good) {
		t.Fatalf("the premise: the saved record holds %s\n%s", good, raw[recordKey(kindUnits, k)])
	}
	if e := openNativeCache(state).unitsOf(k); e == nil {
		t.Fatal("the premise: the saved entry is read back")
	}
	for _, bad := range []string{`[["src/main.rs"]]`, `[["src/main.rs","/w","x"]]`, `null`} {
		var b bytes.Buffer
		v := []byte(strings.Replace(string(raw[recordKey(kindUnits, k)]), good, bad, 1))
		w := kvfile.NewWriter(&b, kvfile.RecordSize(recordKey(kindUnits, k), v, false))
		w.Add(recordKey(kindUnits, k), v)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.path, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		if e := openNativeCache(state).unitsOf(k); e != nil {
			t.Errorf("units %s: read as %v", bad, e.Units)
		}
	}
}

// count is the number of kind's records, decoded or not.
func (c *nativeCache) count(kind byte) int {
	n := 0
	for k := range c.raw {
		if k[0] == kind {
			n++
		}
	}
	switch kind {
	case kindArchive:
		n += len(c.m)
	case kindVersion:
		n += len(c.versions)
	case kindUnits:
		n += len(c.units)
	}
	return n
}

// The JSON file of an earlier build is read when the kvfile is not there, and replaced by it at the
// first save: the archives, versions and units it holds answer without a read.
func TestReadCacheCarriesTheJSONFileOver(t *testing.T) {
	state := t.TempDir()
	legacy := filepath.Join(state, legacyNativeCacheFile)
	k := digest.Key{Dev: 1, Ino: 2, Size: 3, MtimeNS: 4, CtimeNS: 5}
	doc := `{"archives":[{"key":{"Dev":1,"Ino":2,"Size":3,"MtimeNS":4,"CtimeNS":5},"members":[{"name":"a.o"}]}],` +
		`"versions":[{"key":{"Dev":1,"Ino":2,"Size":3,"MtimeNS":4,"CtimeNS":5},"version":"1.2.3"}],` +
		`"units":[{"key":{"Dev":1,"Ino":2,"Size":3,"MtimeNS":4,"CtimeNS":5},"units":[["src/main.rs","/w"]]}]}`
	if err := os.WriteFile(legacy, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	c := openNativeCache(state)
	c.save()
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Fatalf("the JSON file is still there after the save: %v", err)
	}
	c = openNativeCache(state)
	if e := c.archive(k); e == nil || len(e.Members) != 1 || e.Members[0].Name != "a.o" {
		t.Errorf("archive: %+v", e)
	}
	if e := c.version(k); e == nil || e.Version != "1.2.3" {
		t.Errorf("version: %+v", e)
	}
	if e := c.unitsOf(k); e == nil || len(e.Units) != 1 || e.Units[0] != (unitName{"src/main.rs", "/w"}) {
		t.Errorf("units: %+v", e)
	}
}
