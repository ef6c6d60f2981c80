package ninja

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// depsBuild builds a small deps = gcc project with the real ninja and returns its folder.
func depsBuild(t *testing.T) string {
	need(t, "ninja", "cc")
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"inc/a.h": "#define A 1\n", "inc/b h.h": "#define B 2\n",
		"x.c": "#include \"a.h\"\n#include \"b h.h\"\nint x(void){return A+B;}\n",
		"y.c": "#include \"a.h\"\nint main(void){return A;}\n",
		"build.ninja": "rule cc\n  command = cc -MD -MF $out.d -Iinc -c $in -o $out\n  depfile = $out.d\n  deps = gcc\n" +
			"build x.o: cc x.c\nbuild y.o: cc y.c\n",
	})
	sh(t, dir, nil, "ninja")
	return dir
}

// TestLogsOfARealBuild reads the logs ninja 1.11 wrote and compares them with ninja's own `-t deps`.
func TestLogsOfARealBuild(t *testing.T) {
	dir := depsBuild(t)
	l, err := ReadLog(filepath.Join(dir, ".ninja_log"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Version < 5 || len(l.Entries) != 2 || l.Truncated {
		t.Fatalf("log %+v", l)
	}
	for _, o := range []string{"x.o", "y.o"} {
		e := l.Entries[o]
		st, _ := os.Stat(filepath.Join(dir, o))
		if e == nil || e.CommandHash == 0 || e.EndMS < e.StartMS {
			t.Fatalf("%s: %+v", o, e)
		}
		// ninja 1.9–1.11 (v5) record the output's mtime after the command.
		if l.Version == 5 && e.MTime != st.ModTime().UnixNano() {
			t.Fatalf("%s: log mtime %d, file %d", o, e.MTime, st.ModTime().UnixNano())
		}
	}
	d, err := ReadDeps(filepath.Join(dir, ".ninja_deps"))
	if err != nil {
		t.Fatal(err)
	}
	out := sh(t, dir, nil, "ninja", "-t", "deps")
	// gcc -MD lists the implicit /usr/include/stdc-predef.h too.
	// ninja -t deps prints "x.o: #deps 3, deps mtime 1796... (VALID)" and one indented input per line.
	var got strings.Builder
	for _, o := range []string{"x.o", "y.o"} {
		r := d.Records[o]
		if r == nil {
			t.Fatalf("no deps record for %s: %+v", o, d.Records)
		}
		got.WriteString(o + ":")
		for _, in := range r.Inputs {
			got.WriteString(" " + in)
		}
		got.WriteString("\n")
		if !strings.Contains(out, o+": #deps "+itoa(len(r.Inputs))+", deps mtime "+itoa64(r.MTime)+" (VALID)") {
			t.Fatalf("ninja -t deps disagrees on %s (%d inputs, mtime %d):\n%s", o, len(r.Inputs), r.MTime, out)
		}
		for _, in := range r.Inputs {
			if !strings.Contains(out, "    "+in+"\n") {
				t.Fatalf("ninja -t deps lacks %q:\n%s", in, out)
			}
		}
	}
	if want := "x.o: x.c /usr/include/stdc-predef.h inc/a.h inc/b h.h\ny.o: y.c /usr/include/stdc-predef.h inc/a.h\n"; got.String() != want {
		t.Fatalf("deps records:\n%s\nwant\n%s", got.String(), want)
	}
}

func itoa(n int) string     { return strconv.Itoa(n) }
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func TestParseLogVersions(t *testing.T) {
	for _, tc := range []struct {
		text      string
		version   int
		mtime     int64
		hash      string
		truncated bool
	}{
		{"# ninja log v5\n1\t9\t1700000000\ta.o\tdeadbeef\n", 5, 1700000000 * 1e9, "MurmurHash64A", false},
		{"# ninja log v5\n1\t9\t1796154792129630530\ta.o\tdeadbeef\n", 5, 1796154792129630530, "MurmurHash64A", false},
		{"# ninja log v6\n0\t5\t1\ta.o\t1\n1\t9\t1796154792129630530\ta.o\tdeadbeef\n2\t3\t4\tb", 6, 1796154792129630530, "MurmurHash64A", true},
		{"# ninja log v7\n1\t9\t1796154792129630530\ta.o\tffffffffffffffff\n", 7, 1796154792129630530, "rapidhash", false},
	} {
		l, err := ParseLog("t/.ninja_log", []byte(tc.text))
		if err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		e := l.Entries["a.o"]
		if l.Version != tc.version || e.MTime != tc.mtime || l.HashName() != tc.hash || l.Truncated != tc.truncated || len(l.Entries) != 1 {
			t.Fatalf("%q: %+v %+v", tc.text, l, e)
		}
	}
}

func TestLogDamageNamesTheFile(t *testing.T) {
	for text, want := range map[string]string{
		"":                                 "empty file",
		"# ninja log v4\n":                 "log version 4",
		"# ninja log v9\n":                 "log version 9",
		"# ninja log vX\n":                 "bad version",
		"ninja log\n":                      "signature",
		"# ninja log v5\n1\t2\t3\ta.o\n":   "line 2: 4 tab-separated fields",
		"# ninja log v5\nx\t2\t3\ta\t1\n":  "start time",
		"# ninja log v5\n1\t2\t3\ta\tzz\n": "command hash",
		"# ninja log v5\n1\t2\t3\t\t1\n":   "empty output",
	} {
		_, err := ParseLog("b/.ninja_log", []byte(text))
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "b/.ninja_log") || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: want a CorruptError naming b/.ninja_log and %q, got %v", text, want, err)
		}
	}
}

func depsFile(version int32, recs ...[]byte) []byte {
	b := []byte("# ninjadeps\n")
	b = binary.LittleEndian.AppendUint32(b, uint32(version))
	for _, r := range recs {
		b = append(b, r...)
	}
	return b
}

func pathRec(p string, id int) []byte {
	body := []byte(p)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	body = binary.LittleEndian.AppendUint32(body, ^uint32(id))
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func depsRec(v3 bool, out int, mtime int64, ins ...int) []byte {
	body := binary.LittleEndian.AppendUint32(nil, uint32(out))
	if v3 {
		body = binary.LittleEndian.AppendUint32(body, uint32(mtime))
	} else {
		body = binary.LittleEndian.AppendUint64(body, uint64(mtime))
	}
	for _, i := range ins {
		body = binary.LittleEndian.AppendUint32(body, uint32(i))
	}
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(body))|1<<31), body...)
}

func TestParseDepsV3(t *testing.T) {
	d, err := ParseDeps("v3", depsFile(3, pathRec("a.o", 0), pathRec("a.c", 1), depsRec(true, 0, 1500000000, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if r := d.Records["a.o"]; r == nil || r.MTime != 1500000000*1e9 || len(r.Inputs) != 1 || r.Inputs[0] != "a.c" {
		t.Fatalf("%+v", d.Records)
	}
}

// TestDepsDamage cuts a real .ninja_deps at every byte and corrupts its fields: each gives a
// CorruptError naming the file (or parses cleanly at a record boundary), never a panic.
func TestDepsDamage(t *testing.T) {
	dir := depsBuild(t)
	p := filepath.Join(dir, ".ninja_deps")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	clean := 0
	for n := 0; n < len(data); n++ {
		d, err := ParseDeps(p, data[:n])
		if err == nil {
			clean++
			continue
		}
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), p) {
			t.Fatalf("cut at %d: %v", n, err)
		}
		if n >= 16 && d == nil {
			t.Fatalf("cut at %d: no partial log", n)
		}
	}
	if clean == 0 {
		t.Fatal("no record boundary parsed cleanly")
	}
	for name, bad := range map[string][]byte{
		"id check":   depsFile(4, pathRec("a.o", 1)),
		"output id":  depsFile(4, pathRec("a.o", 0), depsRec(false, 5, 1)),
		"input id":   depsFile(4, pathRec("a.o", 0), depsRec(false, 0, 1, 7)),
		"over ninja": append(depsFile(4), 0xff, 0xff, 0x0f, 0x00),
		"version 5":  depsFile(5),
		"signature":  []byte("# ninjadep\n\x04\x00\x00\x00"),
	} {
		_, err := ParseDeps(p, bad)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestReadRefusesDryRunOnDamagedLogs: ninja truncates a damaged .ninja_deps even under -n, so Read
// must not run it, and must leave the file as it was.
func TestReadRefusesDryRunOnDamagedLogs(t *testing.T) {
	dir := depsBuild(t)
	p := filepath.Join(dir, ".ninja_deps")
	data, _ := os.ReadFile(p)
	cut := data[:len(data)-3]
	os.WriteFile(p, cut, 0o644)
	lp := filepath.Join(dir, ".ninja_log")
	logData, _ := os.ReadFile(lp)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := Read(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(b.DryRunErr, ErrLogsUnsafe) || !strings.Contains(b.DryRunErr.Error(), p) || b.DryRun != nil {
		t.Fatalf("dry run err %v", b.DryRunErr)
	}
	var ce *CorruptError
	if !errors.As(b.DepsErr, &ce) || !strings.Contains(ce.Reason, "truncated") {
		t.Fatalf("deps err %v", b.DepsErr)
	}
	// The records before the damage still give x.o its inputs.
	if e := b.ByOutput["x.o"]; inputOf(e.Inputs, "b h.h") == nil {
		t.Fatalf("x.o inputs %+v", e.Inputs)
	}
	if now, _ := os.ReadFile(p); !bytes.Equal(now, cut) {
		t.Fatal(".ninja_deps changed")
	}
	// A damaged .ninja_log: same refusal.
	os.WriteFile(p, data, 0o644)
	os.WriteFile(lp, append(append([]byte{}, logData...), "1\t2\tzz\tq\t1\n"...), 0o644)
	b, err = Read(ctx, dir, Options{})
	if err != nil || !errors.Is(b.DryRunErr, ErrLogsUnsafe) || !strings.Contains(b.DryRunErr.Error(), lp) {
		t.Fatalf("%v / %v", err, b.DryRunErr)
	}
	// An older log version than this ninja keeps is refused too (ninja 1.11 keeps v4+, so use deps v3).
	os.WriteFile(lp, logData, 0o644)
	os.WriteFile(p, depsFile(3), 0o644)
	if b, _ = Read(ctx, dir, Options{}); !errors.Is(b.DryRunErr, ErrLogsUnsafe) {
		t.Fatalf("deps v3: %v", b.DryRunErr)
	}
	if now, _ := os.ReadFile(p); !bytes.Equal(now, depsFile(3)) {
		t.Fatal(".ninja_deps v3 changed")
	}
}

func FuzzParseLog(f *testing.F) {
	f.Add([]byte("# ninja log v5\n1\t9\t1700000000\ta.o\tdeadbeef\n"))
	f.Add([]byte("# ninja log v7\n1\t9\t-1\ta b\tffffffffffffffff\n2\t"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLog("f", data)
		if err == nil && l == nil {
			t.Fatal("nil log without error")
		}
		if err != nil && !strings.Contains(err.Error(), "f:") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

func FuzzParseDeps(f *testing.F) {
	f.Add(depsFile(4, pathRec("a.o", 0), pathRec("a.c", 1), depsRec(false, 0, 17, 1)))
	f.Add(depsFile(3, pathRec("a.o", 0), depsRec(true, 0, 17, 0)))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDeps("f", data)
		if err == nil && d == nil {
			t.Fatal("nil log without error")
		}
		if err != nil && !strings.HasPrefix(err.Error(), "f:") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
