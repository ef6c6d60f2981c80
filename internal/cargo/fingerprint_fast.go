package cargo

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// parseFingerprintFast decodes the fingerprint JSON Cargo writes (serde_json: one object, the fields of
// ParseFingerprint) in one pass over the bytes, without encoding/json's reflection and its second
// decode of every deps and local entry: a check reads one fingerprint per unit, 29,000 of them in a
// large tree. It accepts only what it can decode exactly as ParseFingerprint does and gives errFast
// for anything else (a null, a key that differs from a known one only in case, a duplicate local
// variant, a number that is not a plain u64, text after the object, a missing rustc, deps or local
// field); ParseFingerprint then decodes
// the document the slow way, which gives its answer or its error.
func parseFingerprintFast(data []byte) (*Fingerprint, error) {
	p := &fastJSON{b: data}
	fp := &Fingerprint{}
	var sawRustc, sawDeps, sawLocal bool
	var seen uint16 // the known fields met, by their index in fingerprintFields
	err := p.object(func(key []byte) error {
		i := fieldIndex(key)
		if i >= 0 {
			if seen&(1<<i) != 0 {
				return errFast // given twice: the slow decoder says so
			}
			seen |= 1 << i
		}
		switch string(key) {
		case "rustc":
			sawRustc = true
			return p.u64(&fp.Rustc)
		case "target":
			return p.u64(&fp.Target)
		case "profile":
			return p.u64(&fp.Profile)
		case "path":
			return p.u64(&fp.Path)
		case "config":
			return p.u64(&fp.Config)
		case "compile_kind":
			return p.u64(&fp.CompileKind)
		case "features":
			return p.str(&fp.Features)
		case "declared_features":
			return p.str(&fp.DeclaredFeatures)
		case "rustflags":
			return p.strings(&fp.Rustflags)
		case "deps":
			sawDeps = true
			fp.Deps = nil
			return p.array(func() error {
				d, err := p.dep()
				if err != nil {
					return err
				}
				fp.Deps = append(fp.Deps, d)
				return nil
			})
		case "local":
			sawLocal = true
			fp.Local = nil
			return p.array(func() error {
				lf, err := p.local()
				fp.Local = append(fp.Local, lf)
				return err
			})
		}
		if foldsToKnown(string(key), fingerprintFields...) {
			return errFast // encoding/json would take it for the field
		}
		return p.skip()
	})
	if err != nil || !sawRustc || !sawDeps || !sawLocal {
		return nil, errFast // the slow decoder names what is missing
	}
	p.space()
	if p.i != len(p.b) {
		return nil, errFast
	}
	return fp, nil
}

// local decodes one `local` entry: an object with one externally tagged variant.
func (p *fastJSON) local() (LocalFingerprint, error) {
	var lf LocalFingerprint
	n := 0
	err := p.object(func(k []byte) error {
		if n++; n > 1 {
			return errFast
		}
		switch string(k) {
		case "CheckDepInfo":
			v := &struct{ DepInfo string }{}
			lf.CheckDepInfo = v
			return p.fields(func(f []byte) (bool, error) {
				if string(f) == "dep_info" {
					return true, p.str(&v.DepInfo)
				}
				return false, nil
			}, "dep_info")
		case "RerunIfChanged":
			v := &struct {
				Output string
				Paths  []string
			}{}
			lf.RerunIfChanged = v
			return p.fields(func(f []byte) (bool, error) {
				switch string(f) {
				case "output":
					return true, p.str(&v.Output)
				case "paths":
					return true, p.strings(&v.Paths)
				}
				return false, nil
			}, "output", "paths")
		case "RerunIfEnvChanged":
			v := &struct {
				Var string
				Val *string
			}{}
			lf.RerunIfEnvChanged = v
			return p.fields(func(f []byte) (bool, error) {
				switch string(f) {
				case "var":
					return true, p.str(&v.Var)
				case "val":
					if p.literal("null") {
						v.Val = nil
						return true, nil
					}
					var s string
					err := p.str(&s)
					v.Val = &s
					return true, err
				}
				return false, nil
			}, "var", "val")
		case "Precalculated":
			var s string
			lf.Precalculated = &s
			return p.str(&s)
		}
		lf.Unknown = string(k)
		return p.skip()
	})
	if err != nil || n != 1 {
		return lf, errFast
	}
	return lf, nil
}

// fields decodes an object whose known keys (names) member decodes (reporting true); other keys are
// skipped unless encoding/json would match them to a known one by case.
func (p *fastJSON) fields(member func(key []byte) (bool, error), names ...string) error {
	return p.object(func(k []byte) error {
		if known, err := member(k); known {
			return err
		}
		if foldsToKnown(string(k), names...) {
			return errFast
		}
		return p.skip()
	})
}

// dep decodes one `deps` entry: [pkg_id, "name", public, hash], exactly four elements.
func (p *fastJSON) dep() (DepFingerprint, error) {
	var d DepFingerprint
	if !p.expect('[') || p.depth >= maxFastDepth {
		return d, errFast
	}
	if p.u64(&d.PkgID) != nil || !p.expect(',') || p.str(&d.Name) != nil || !p.expect(',') ||
		p.boolean(&d.Public) != nil || !p.expect(',') || p.u64(&d.Hash) != nil || !p.expect(']') {
		return d, errFast
	}
	return d, nil
}

func foldsToKnown(key string, names ...string) bool {
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return true
		}
	}
	return false
}

// fieldIndex is key's index in fingerprintFields, or -1; told apart by length and first byte first.
func fieldIndex(key []byte) int {
	for i, f := range fingerprintFields {
		if len(f) == len(key) && f[0] == key[0] && string(key) == f {
			return i
		}
	}
	return -1
}

// errFast: the fast decoder does not take this document; the slow one decides.
var errFast = errors.New("not in the fast decoder's subset")

// fastJSON is a cursor over a JSON document.
type fastJSON struct {
	b       []byte
	i       int
	depth   int    // objects and arrays open at the cursor
	scratch []byte // where escaped strings are unescaped, one at a time (each then copied out)
}

// maxFastDepth is the deepest nesting the fast decoder follows: Cargo's fingerprints nest 4 deep. A
// deeper document goes to encoding/json, which has its own limit (10,000) and its own error; the fast
// decoder's recursion never grows the stack with the input.
const maxFastDepth = 256

func (p *fastJSON) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// expect consumes c after white space.
func (p *fastJSON) expect(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// peek is the next byte after white space (0 at the end).
func (p *fastJSON) peek() byte {
	p.space()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *fastJSON) literal(w string) bool {
	p.space()
	if len(p.b)-p.i >= len(w) && string(p.b[p.i:p.i+len(w)]) == w {
		p.i += len(w)
		return true
	}
	return false
}

// object calls member for each key, the cursor at the value, which member consumes. The key's bytes
// are only valid during the call.
func (p *fastJSON) object(member func(key []byte) error) error {
	if !p.expect('{') || p.depth >= maxFastDepth {
		return errFast
	}
	p.depth++
	defer func() { p.depth-- }()
	if p.expect('}') {
		return nil
	}
	for {
		k, err := p.key()
		if err != nil || !p.expect(':') {
			return errFast
		}
		if err := member(k); err != nil {
			return err
		}
		if p.expect(',') {
			continue
		}
		if p.expect('}') {
			return nil
		}
		return errFast
	}
}

// array calls elem for each element, the cursor at it.
func (p *fastJSON) array(elem func() error) error {
	if !p.expect('[') || p.depth >= maxFastDepth {
		return errFast
	}
	p.depth++
	defer func() { p.depth-- }()
	if p.expect(']') {
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if p.expect(',') {
			continue
		}
		if p.expect(']') {
			return nil
		}
		return errFast
	}
}

// strings decodes an array of strings; [] gives an empty, non-nil slice, as encoding/json does.
func (p *fastJSON) strings(out *[]string) error {
	list := []string{}
	err := p.array(func() error {
		var s string
		err := p.str(&s)
		list = append(list, s)
		return err
	})
	*out = list
	return err
}

// u64 decodes a number that is a plain unsigned integer that fits 64 bits.
func (p *fastJSON) u64(out *uint64) error {
	p.space()
	j := p.i
	var v uint64
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		d := uint64(p.b[j] - '0')
		if v > (math.MaxUint64-d)/10 {
			return errFast // past 64 bits
		}
		v = v*10 + d
		j++
	}
	if j == p.i || j < len(p.b) && (p.b[j] == '.' || p.b[j] == 'e' || p.b[j] == 'E') || j-p.i > 1 && p.b[p.i] == '0' {
		return errFast
	}
	*out, p.i = v, j
	return nil
}

func (p *fastJSON) boolean(out *bool) error {
	switch {
	case p.literal("true"):
		*out = true
	case p.literal("false"):
		*out = false
	default:
		return errFast
	}
	return nil
}

// key reads an object's key: its bytes in the document when it holds no escape, else decoded as str
// decodes.
func (p *fastJSON) key() ([]byte, error) {
	if !p.expect('"') {
		return nil, errFast
	}
	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			k := p.b[start:p.i]
			p.i++
			if !utf8.Valid(k) {
				return nil, errFast
			}
			return k, nil
		case c == '\\':
			var s string
			if err := p.escaped(start, &s); err != nil {
				return nil, err
			}
			return []byte(s), nil
		case c < 0x20:
			return nil, errFast
		}
		p.i++
	}
	return nil, errFast
}

// str decodes a string, escapes included; invalid UTF-8 and lone surrogates are left to the slow
// decoder (which replaces them).
func (p *fastJSON) str(out *string) error {
	if !p.expect('"') {
		return errFast
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if !utf8.Valid(s) {
				return errFast
			}
			*out = string(s)
			return nil
		case c == '\\':
			return p.escaped(start, out)
		case c < 0x20:
			return errFast
		}
		p.i++
	}
	return errFast
}

// escaped finishes a string with escapes that began at start.
func (p *fastJSON) escaped(start int, out *string) error {
	buf := append(p.scratch[:0], p.b[start:p.i]...)
	defer func() { p.scratch = buf[:0] }()
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(buf) {
				return errFast
			}
			*out = string(buf)
			return nil
		case c < 0x20:
			return errFast
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			return errFast
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return errFast
			}
			if utf16.IsSurrogate(r) {
				if p.i+1 >= len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
					return errFast
				}
				p.i += 2
				r2, ok := p.hex4()
				if !ok {
					return errFast
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return errFast
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return errFast
		}
	}
	return errFast
}

func (p *fastJSON) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

// skip consumes one value of any kind.
func (p *fastJSON) skip() error {
	switch c := p.peek(); {
	case c == '{':
		return p.object(func([]byte) error { return p.skip() })
	case c == '[':
		return p.array(p.skip)
	case c == '"':
		var s string
		return p.str(&s)
	case c == 't' || c == 'f':
		var b bool
		return p.boolean(&b)
	case c == 'n':
		if p.literal("null") {
			return nil
		}
		return errFast
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return errFast
}

// number consumes a number of JSON's grammar: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func (p *fastJSON) number() error {
	b, i := p.b, p.i
	digits := func() int {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return errFast
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return errFast
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return errFast
		}
	}
	p.i = i
	return nil
}
