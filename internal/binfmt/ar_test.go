package binfmt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func memberNames(a *Archive) []string {
	var names []string
	for _, m := range a.Members {
		names = append(names, m.Name)
	}
	return names
}

// arList is GNU ar's own member list ("ar t").
func arList(t *testing.T, dir, archive string) []string {
	t.Helper()
	out := strings.TrimSpace(sh(t, dir, nil, "ar", "t", archive))
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

func symbolsOf(a *Archive) map[string]string {
	m := map[string]string{}
	for _, s := range a.Symbols {
		m[s.Name] = a.Members[s.Member].Name
	}
	return m
}

// checkMemberBytes compares every member's bytes read through Archive.Open
// with the object file the archive was built from.
func checkMemberBytes(t *testing.T, a *Archive, dir string) {
	t.Helper()
	for _, m := range a.Members {
		sr, c, err := a.Open(m)
		if err != nil {
			t.Fatalf("Open(%s): %v", m.Name, err)
		}
		got, err := io.ReadAll(sr)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := readFile(t, filepath.Join(dir, filepath.Base(m.Name)))
		if !bytes.Equal(got, want) {
			t.Errorf("member %s: %d bytes differ from the %d-byte source object", m.Name, len(got), len(want))
		}
		if int64(len(got)) != m.Size {
			t.Errorf("member %s: Size %d, read %d", m.Name, m.Size, len(got))
		}
	}
	// EachMember gives the same bytes, in order, for the members asked for.
	var names []string
	err := a.EachMember(func(i int, m Member) bool { return i%2 == 0 }, func(m Member, sr *io.SectionReader) error {
		names = append(names, m.Name)
		got, err := io.ReadAll(sr)
		if err != nil {
			return err
		}
		if want := readFile(t, filepath.Join(dir, filepath.Base(m.Name))); !bytes.Equal(got, want) {
			t.Errorf("EachMember: member %s: %d bytes differ from the %d-byte source object", m.Name, len(got), len(want))
		}
		return nil
	})
	var want []string
	for i, m := range a.Members {
		if i%2 == 0 {
			want = append(want, m.Name)
		}
	}
	if err != nil || fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("EachMember over the even members: %q, %v; want %q", names, err, want)
	}
}

// An archive cut short after it was opened: EachMember says which member runs past the end, at its
// offset, and an error of fn ends the walk.
func TestArchiveEachMemberChanged(t *testing.T) {
	_, path, _ := gnuArchive(t, "libx.a")
	a, err := OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	last := a.Members[len(a.Members)-1]
	if err := os.Truncate(path, last.Offset+last.Size/2); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = a.EachMember(func(int, Member) bool { return true }, func(Member, *io.SectionReader) error { n++; return nil })
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), last.Name) || !strings.Contains(err.Error(), path) || n != len(a.Members)-1 {
		t.Errorf("EachMember over a cut archive: %v after %d members; want a format error naming %s in %s after %d", err, n, last.Name, path, len(a.Members)-1)
	}
	stop := errors.New("stop")
	n = 0
	if err := a.EachMember(func(int, Member) bool { return true }, func(Member, *io.SectionReader) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("fn's error: %v after %d members, want stop after 1", err, n)
	}
}

// gnuArchive builds the test C objects in a new folder and GNU ar's archive of the three of them, named
// name there.
func gnuArchive(t *testing.T, name string) (dir, path string, objs []string) {
	t.Helper()
	need(t, "ar")
	dir = t.TempDir()
	objs = buildCObjects(t, dir)
	sh(t, dir, nil, "ar", "rcs", name, objs[0], objs[1], objs[2])
	return dir, filepath.Join(dir, name), objs
}

func TestArchiveGNULongNames(t *testing.T) {
	dir, path, objs := gnuArchive(t, "libfoo.a")

	ok, err := IsArchive(path)
	if err != nil || !ok {
		t.Fatalf("IsArchive = %v, %v", ok, err)
	}
	a, err := OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	if a.Thin {
		t.Error("Thin = true for a normal archive")
	}
	want := arList(t, dir, "libfoo.a")
	if got := memberNames(a); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("members %q, ar t says %q", got, want)
	}
	if len(objs[2]) <= 15 {
		t.Fatal("test needs a name over 15 characters")
	}
	syms := symbolsOf(a)
	for sym, mem := range map[string]string{"foo": "foo.o", "foo_table": "foo.o", "foo_name": "foo.o", "bar": "bar.o",
		"bar_counter": "bar.o", "a_function_in_a_file_with_a_very_long_name": "this_is_a_long_member_name.o"} {
		if syms[sym] != mem {
			t.Errorf("symbol %s in %q, want %q", sym, syms[sym], mem)
		}
	}
	for _, m := range a.Members {
		if m.Path != "" || m.Offset%2 != 0 || m.MTime != 0 {
			t.Errorf("member %+v: want no Path, even Offset, MTime 0 (deterministic ar)", m)
		}
	}
	checkMemberBytes(t, a, dir)

	// "U": real mtimes.
	sh(t, dir, nil, "ar", "rcsU", "libu.a", objs[0])
	a, err = OpenArchive(filepath.Join(dir, "libu.a"))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(dir, objs[0]))
	if a.Members[0].MTime != st.ModTime().Unix() {
		t.Errorf("MTime %d, file mtime %d", a.Members[0].MTime, st.ModTime().Unix())
	}
}

func TestArchiveThin(t *testing.T) {
	need(t, "ar")
	dir := t.TempDir()
	objs := buildCObjects(t, dir)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, nil, "ar", "rcsT", "sub/libthin.a", objs[0], objs[1], objs[2])
	path := filepath.Join(dir, "sub", "libthin.a")
	a, err := OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Thin {
		t.Fatal("Thin = false")
	}
	if len(a.Members) != 3 {
		t.Fatalf("members %q", memberNames(a))
	}
	for i, m := range a.Members {
		wantPath := filepath.Join(dir, objs[i])
		if m.Path != wantPath || m.Offset != 0 {
			t.Errorf("member %d: Path %q Offset %d, want %q, 0", i, m.Path, m.Offset, wantPath)
		}
		st, err := os.Stat(wantPath)
		if err != nil {
			t.Fatal(err)
		}
		if m.Size != st.Size() {
			t.Errorf("member %s: Size %d, file has %d", m.Name, m.Size, st.Size())
		}
	}
	if symbolsOf(a)["bar"] != "../bar.o" {
		t.Errorf("symbols: %v", symbolsOf(a))
	}
	checkMemberBytes(t, a, dir)

	// llvm-ar --thin with the archive next to the objects.
	need(t, "llvm-ar")
	sh(t, dir, nil, "llvm-ar", "--thin", "rcs", "libllvmthin.a", objs[0], objs[2])
	a, err = OpenArchive(filepath.Join(dir, "libllvmthin.a"))
	if err != nil {
		t.Fatal(err)
	}
	if got := memberNames(a); fmt.Sprint(got) != fmt.Sprint([]string{objs[0], objs[2]}) {
		t.Errorf("llvm-ar thin members %q", got)
	}
	checkMemberBytes(t, a, dir)
}

func TestArchiveLLVMFormats(t *testing.T) {
	need(t, "llvm-ar")
	dir := t.TempDir()
	objs := buildCObjects(t, dir)
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"gnu", nil, []string{"--format=gnu", "rcs"}},
		{"sym64", []string{"SYM64_THRESHOLD=0"}, []string{"--format=gnu", "rcs"}},
		{"bsd", nil, []string{"--format=bsd", "rcs"}},
		{"darwin", nil, []string{"--format=darwin", "rcs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lib := "lib" + c.name + ".a"
			args := append(append([]string{}, c.args...), lib)
			args = append(args, objs...)
			sh(t, dir, c.env, "llvm-ar", args...)
			raw := readFile(t, filepath.Join(dir, lib))
			if c.name == "sym64" && !bytes.Contains(raw, []byte("/SYM64/")) {
				t.Fatal("llvm-ar did not write /SYM64/")
			}
			a, err := OpenArchive(filepath.Join(dir, lib))
			if err != nil {
				t.Fatal(err)
			}
			if got := memberNames(a); fmt.Sprint(got) != fmt.Sprint(objs) {
				t.Fatalf("members %q, want %q", got, objs)
			}
			syms := symbolsOf(a)
			if syms["foo"] != "foo.o" || syms["a_function_in_a_file_with_a_very_long_name"] != objs[2] {
				t.Errorf("symbols %v", syms)
			}
			checkMemberBytes(t, a, dir)
		})
	}
}

// bsdArchive writes a BSD-style archive by hand: "#1/NN" names whose bytes
// start the member data, an odd-sized member with its pad byte, and a short
// space-padded name without GNU's trailing slash.
func bsdArchive(members map[string][]byte, order []string) []byte {
	var b bytes.Buffer
	b.WriteString("!<arch>\n")
	for _, name := range order {
		data := members[name]
		if len(name) <= 16 && !strings.Contains(name, " ") && len(name) < 10 {
			fmt.Fprintf(&b, "%-16s%-12d%-6d%-6d%-8o%-10d`\n", name, 1700000000, 501, 20, 0o100644, len(data))
			b.Write(data)
			if len(data)%2 == 1 {
				b.WriteByte('\n')
			}
			continue
		}
		// Name padded with NULs to a multiple of 4 as BSD ar does.
		nb := []byte(name)
		for len(nb)%4 != 0 {
			nb = append(nb, 0)
		}
		fmt.Fprintf(&b, "%-16s%-12d%-6d%-6d%-8o%-10d`\n", fmt.Sprintf("#1/%d", len(nb)), 1700000001, 501, 20, 0o100644, len(nb)+len(data))
		b.Write(nb)
		b.Write(data)
		if (len(nb)+len(data))%2 == 1 {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func TestArchiveBSDHandWritten(t *testing.T) {
	members := map[string][]byte{
		"short.o":                        []byte("odd"),
		"a very long name with spaces.o": []byte("0123456789"),
		"x.o":                            {},
		"lib.rmeta":                      []byte("rust metadata!"),
	}
	order := []string{"short.o", "a very long name with spaces.o", "x.o", "lib.rmeta"}
	raw := bsdArchive(members, order)
	path := filepath.Join(t.TempDir(), "libbsd.a")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := memberNames(a); fmt.Sprint(got) != fmt.Sprint(order) {
		t.Fatalf("members %q", got)
	}
	for _, m := range a.Members {
		sr, c, err := a.Open(m)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(sr)
		c.Close()
		if !bytes.Equal(got, members[m.Name]) {
			t.Errorf("%s: %q", m.Name, got)
		}
	}
	if a.Members[0].MTime != 1700000000 || a.Members[1].MTime != 1700000001 {
		t.Errorf("mtimes %d %d", a.Members[0].MTime, a.Members[1].MTime)
	}
}

func TestArchiveEmpty(t *testing.T) {
	a, err := ReadArchive(strings.NewReader("!<arch>\n"), 8, "empty.a")
	if err != nil || len(a.Members) != 0 {
		t.Fatalf("%v %v", a, err)
	}
	need(t, "ar")
	dir := t.TempDir()
	p := filepath.Join(dir, "not.a")
	writeFile(t, p, "!<ar")
	if ok, err := IsArchive(p); ok || err != nil {
		t.Errorf("IsArchive(short) = %v, %v", ok, err)
	}
	if _, err := IsArchive(filepath.Join(dir, "missing")); err == nil {
		t.Error("IsArchive(missing) gave no error")
	}
}

func TestArchiveCUDAFixtures(t *testing.T) {
	fx := fixtureDir(t)
	need(t, "ar")
	for _, rel := range []string{"v1/libgroth16_cuda.a", "v2/libgroth16_cuda.a", "linkorder/a/libgroth16_cuda.a", "linkorder/b/libgroth16_cuda.a", "rdc/libgroth16_cuda.a"} {
		path := filepath.Join(fx, rel)
		a, err := OpenArchive(path)
		if err != nil {
			t.Fatal(err)
		}
		want := arList(t, fx, rel)
		if got := memberNames(a); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: members %q, ar t says %q", rel, got, want)
		}
		if len(a.Symbols) == 0 {
			t.Errorf("%s: no symbols", rel)
		}
	}
}

// TestArchiveRlib builds a Rust rlib that bundles a native static library and
// checks its members (lib.rmeta, *.rcgu.o, the bundled C object).
func TestArchiveRlib(t *testing.T) {
	need(t, "rustc", "ar", "cc")
	dir := t.TempDir()
	objs := buildCObjects(t, dir)
	sh(t, dir, nil, "ar", "rcs", "libcfoo.a", objs[0], objs[1])
	writeFile(t, filepath.Join(dir, "lib.rs"), `extern "C" { fn foo(x: i32) -> i32; }
pub fn call_foo(x: i32) -> i32 { unsafe { foo(x) } }
`)
	sh(t, dir, nil, "rustc", "--edition=2021", "--crate-type=rlib", "--crate-name=rsfoo", "-C", "opt-level=1",
		"-L", "native="+dir, "-l", "static=cfoo", "lib.rs", "-o", "librsfoo.rlib")
	path := filepath.Join(dir, "librsfoo.rlib")
	a, err := OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	want := arList(t, dir, "librsfoo.rlib")
	names := memberNames(a)
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("members %q, ar t says %q", names, want)
	}
	var haveMeta, haveCGU, haveFoo bool
	for _, m := range a.Members {
		switch {
		case m.Name == "lib.rmeta":
			haveMeta = true
		case strings.HasSuffix(m.Name, ".rcgu.o"):
			haveCGU = true
		case m.Name == "foo.o":
			haveFoo = true
			sr, c, err := a.Open(m)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(sr)
			c.Close()
			if !bytes.Equal(got, readFile(t, filepath.Join(dir, "foo.o"))) {
				t.Error("bundled foo.o differs from the original")
			}
		}
	}
	if !haveMeta || !haveCGU || !haveFoo {
		t.Errorf("rlib members %q: want lib.rmeta, *.rcgu.o and foo.o", names)
	}

	// The standard library's own rlibs.
	sysroot := strings.TrimSpace(sh(t, dir, nil, "rustc", "--print", "sysroot"))
	libs, _ := filepath.Glob(filepath.Join(sysroot, "lib", "rustlib", "*", "lib", "libcore-*.rlib"))
	if len(libs) == 0 {
		return
	}
	a, err = OpenArchive(libs[0])
	if err != nil {
		t.Fatal(err)
	}
	want = arList(t, dir, libs[0])
	if fmt.Sprint(memberNames(a)) != fmt.Sprint(want) {
		t.Errorf("%s: members differ from ar t", libs[0])
	}
}

func TestArchiveBadInput(t *testing.T) {
	need(t, "ar", "cc")
	dir := t.TempDir()
	objs := buildCObjects(t, dir)
	sh(t, dir, nil, "ar", append([]string{"rcs", "libfoo.a"}, objs...)...)
	good := readFile(t, filepath.Join(dir, "libfoo.a"))
	a, err := ReadArchive(bytes.NewReader(good), int64(len(good)), "libfoo.a")
	if err != nil {
		t.Fatal(err)
	}
	// Offsets of every header, to corrupt them one by one.
	var hdrs []int64
	for off := int64(8); off < int64(len(good)); {
		hdrs = append(hdrs, off)
		var size int64
		fmt.Sscan(strings.TrimSpace(string(good[off+48:off+58])), &size)
		off += 60 + size + size%2
	}
	if len(hdrs) != len(a.Members)+2 { // "/" and "//" precede the members
		t.Fatalf("%d headers for %d members", len(hdrs), len(a.Members))
	}

	check := func(name string, data []byte, wantOff int64) {
		t.Helper()
		_, err := ReadArchive(bytes.NewReader(data), int64(len(data)), "bad.a")
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v, want *FormatError", name, err)
			return
		}
		if !strings.Contains(err.Error(), "bad.a") || !strings.Contains(err.Error(), fmt.Sprint(fe.Offset)) {
			t.Errorf("%s: %q does not name the file and offset", name, err)
		}
		if wantOff >= 0 && fe.Offset != wantOff {
			t.Errorf("%s: offset %d, want %d (%v)", name, fe.Offset, wantOff, err)
		}
		if strings.Contains(err.Error(), "strconv") {
			t.Errorf("%s: %q names the parser's function, not what is wrong", name, err)
		}
	}
	check("bad magic", append([]byte("!<arch!\n"), good[8:]...), 0)
	check("short magic", good[:5], 0)
	last := hdrs[len(hdrs)-1]
	check("truncated header", good[:last+30], last)
	check("truncated body", good[:len(good)-10], last)
	for i, h := range hdrs {
		bad := bytes.Clone(good)
		bad[h+58] = 'x'
		check(fmt.Sprintf("terminator %d", i), bad, h)
		bad = bytes.Clone(good)
		copy(bad[h+48:], "12x4      ")
		check(fmt.Sprintf("size %d", i), bad, h)
	}
	// Long-name reference beyond the table.
	bad := bytes.Clone(good)
	lastMember := hdrs[len(hdrs)-1]
	copy(bad[lastMember:], "/99999          ")
	check("long name", bad, lastMember)
	// Symbol table pointing at no header.
	bad = bytes.Clone(good)
	bad[hdrs[0]+60+4+3] ^= 0x02
	check("armap offset", bad, -1)
	// Every truncation: error or a valid prefix, never a panic.
	for n := 0; n < len(good); n += 7 {
		ReadArchive(bytes.NewReader(good[:n]), int64(n), "trunc.a")
	}

	// Open detects a file that shrank after it was read.
	p := filepath.Join(dir, "shrink.a")
	if err := os.WriteFile(p, good, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err = OpenArchive(p)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, good[:len(good)/2], 0o644)
	if _, _, err := a.Open(a.Members[len(a.Members)-1]); err == nil {
		t.Error("Open of a member past the end of a shrunk file gave no error")
	}
	// Thin member whose file is gone.
	sh(t, dir, nil, "ar", "rcsT", "libthin.a", objs[0])
	a, err = OpenArchive(filepath.Join(dir, "libthin.a"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, objs[0]))
	if _, _, err := a.Open(a.Members[0]); err == nil || !strings.Contains(err.Error(), "libthin.a") {
		t.Errorf("Open of a missing thin member: %v", err)
	}
}

func TestArchiveSymbolsOrder(t *testing.T) {
	need(t, "ar", "nm", "cc")
	dir := t.TempDir()
	objs := buildCObjects(t, dir)
	sh(t, dir, nil, "ar", append([]string{"rcs", "libfoo.a"}, objs...)...)
	a, err := OpenArchive(filepath.Join(dir, "libfoo.a"))
	if err != nil {
		t.Fatal(err)
	}
	// nm --print-armap prints "sym in member" lines for the index.
	out := sh(t, dir, nil, "nm", "--print-armap", "libfoo.a")
	var want []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1] == "in" {
			want = append(want, f[0]+"@"+f[2])
		}
	}
	var got []string
	for _, s := range a.Symbols {
		got = append(got, s.Name+"@"+a.Members[s.Member].Name)
	}
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("symbols %q\nnm says %q", got, want)
	}
}
