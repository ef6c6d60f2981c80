package cargo

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Fingerprint is the JSON record Cargo writes next to each unit's hash file
// (`.fingerprint/<pkg>-<hash>/<kind>-<name>.json`; `struct Fingerprint` in Cargo's
// src/cargo/core/compiler/fingerprint/mod.rs, observed with cargo 1.95). Cargo writes it only to
// explain dirty units, so every field is treated as a record to read, never recomputed.
type Fingerprint struct {
	Rustc            uint64
	Features         string // Rust Debug of the sorted feature list: `[]`, `["timing"]`; "" for run units
	DeclaredFeatures string
	Target           uint64
	Profile          uint64
	Path             uint64
	Deps             []DepFingerprint
	Local            []LocalFingerprint
	Rustflags        []string
	Config           uint64
	CompileKind      uint64
}

// DepFingerprint is one `deps` entry: [pkg_id hash, extern crate name, public, dep fingerprint hash].
type DepFingerprint struct {
	PkgID  uint64
	Name   string
	Public bool
	Hash   uint64 // the dependency's fingerprint hash; its hash file holds HashHex(Hash)
}

// LocalFingerprint is one `local` entry. Exactly one of the pointers is set, by variant name.
type LocalFingerprint struct {
	CheckDepInfo   *struct{ DepInfo string }
	RerunIfChanged *struct {
		Output string
		Paths  []string
	}
	RerunIfEnvChanged *struct {
		Var string
		Val *string // nil: the variable was unset
	}
	Precalculated *string
	// Unknown holds the variant name of a kind this version does not know.
	Unknown string
}

// HashHex formats a fingerprint hash the way Cargo writes the hash file: the u64's little-endian
// bytes in hex (src/cargo/util/hex.rs). 10684275842462820881 becomes "11aa4860452c4694".
func HashHex(v uint64) string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return hex.EncodeToString(b[:])
}

// ReadHashFile returns the 16 hex digits of a unit's hash file. An empty file (Cargo truncates it
// when a unit starts rebuilding and rewrites it on success) gives "" and no error.
func ReadHashFile(path string) (string, error) {
	var buf []byte
	return readHashFile(path, &buf, false)
}

// readHashFile is ReadHashFile reading into *buf (safeio.ReadListedInto: listedRegular says its folder
// listing showed a regular file).
func readHashFile(path string, buf *[]byte, listedRegular bool) (string, error) {
	data, err := safeio.ReadListedInto(path, safeio.MaxRecord, buf, listedRegular)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(data))
	if s == "" {
		return "", nil
	}
	if len(s) != 16 {
		return "", fmt.Errorf("%s: hash file holds %d bytes, want 16 hex digits", path, len(data))
	}
	if _, err := hex.DecodeString(s); err != nil {
		return "", fmt.Errorf("%s: hash file is not hex: %w", path, err)
	}
	return s, nil
}

// ParseFingerprint decodes a fingerprint JSON document. Numbers are read as exact u64s (they overflow
// float64). Errors say which field is wrong; the caller adds the file name.
func ParseFingerprint(data []byte) (*Fingerprint, error) {
	if fp, err := parseFingerprintFast(data); err == nil {
		return fp, nil
	}
	return parseFingerprintSlow(data)
}

// parseFingerprintSlow is ParseFingerprint through encoding/json: the reference parseFingerprintFast
// is tested against, and the decoder of what it does not take.
func parseFingerprintSlow(data []byte) (*Fingerprint, error) {
	var raw struct {
		Rustc            json.RawMessage   `json:"rustc"`
		Features         string            `json:"features"`
		DeclaredFeatures string            `json:"declared_features"`
		Target           json.RawMessage   `json:"target"`
		Profile          json.RawMessage   `json:"profile"`
		Path             json.RawMessage   `json:"path"`
		Deps             []json.RawMessage `json:"deps"`
		Local            []json.RawMessage `json:"local"`
		Rustflags        []string          `json:"rustflags"`
		Config           json.RawMessage   `json:"config"`
		CompileKind      json.RawMessage   `json:"compile_kind"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("invalid fingerprint JSON: %w", inFormatWords(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		// Cargo writes one object: anything after it is a damaged record, not a second thought.
		return nil, errors.New("invalid fingerprint JSON: text after the object")
	}
	if err := exactKeys(data); err != nil {
		return nil, err
	}
	// Cargo's Fingerprint serializes every field: rustc a u64, deps and local arrays. Without them the
	// document says nothing about the unit's inputs, so it is a damaged record, not an empty one (an
	// empty one would make every build folder look orphaned).
	var missing []string
	if len(raw.Rustc) == 0 || string(raw.Rustc) == "null" {
		missing = append(missing, "rustc (a number)")
	}
	if raw.Deps == nil {
		missing = append(missing, "deps (an array)")
	}
	if raw.Local == nil {
		missing = append(missing, "local (an array)")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("not a Cargo fingerprint: no %s", strings.Join(missing, ", "))
	}
	fp := &Fingerprint{Features: raw.Features, DeclaredFeatures: raw.DeclaredFeatures, Rustflags: raw.Rustflags}
	var err error
	num := func(name string, n json.RawMessage) uint64 {
		if len(n) == 0 || err != nil {
			return 0
		}
		var v uint64
		v, err = u64Field(name, n)
		return v
	}
	fp.Rustc = num("rustc", raw.Rustc)
	fp.Target = num("target", raw.Target)
	fp.Profile = num("profile", raw.Profile)
	fp.Path = num("path", raw.Path)
	fp.Config = num("config", raw.Config)
	fp.CompileKind = num("compile_kind", raw.CompileKind)
	if err != nil {
		return nil, err
	}
	for i, d := range raw.Deps {
		dep, e := parseDep(d)
		if e != nil {
			return nil, fmt.Errorf("deps[%d]: %w", i, e)
		}
		fp.Deps = append(fp.Deps, dep)
	}
	for i, l := range raw.Local {
		lf, e := parseLocal(l)
		if e != nil {
			return nil, fmt.Errorf("local[%d]: %w", i, e)
		}
		fp.Local = append(fp.Local, lf)
	}
	return fp, nil
}

// fingerprintFields are the fields of Cargo's Fingerprint as it writes them.
var fingerprintFields = []string{"rustc", "features", "declared_features", "target", "profile", "path", "deps",
	"local", "rustflags", "config", "compile_kind"}

// exactKeys rejects a top-level key that encoding/json would take for a field Cargo writes though it is
// not one (another case: "RUSTC") and a field Cargo writes given twice (encoding/json keeps the last;
// keys Cargo does not write are skipped, as a later Cargo's new fields would be): a document
// Cargo did not write, whose fields cannot be trusted.
func exactKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil // not an object: the decode said so already
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		k, _ := t.(string)
		if seen[k] && slices.Contains(fingerprintFields, k) {
			return fmt.Errorf("invalid fingerprint JSON: field %s appears twice", k)
		}
		seen[k] = true
		if !slices.Contains(fingerprintFields, k) && foldsToKnown(k, fingerprintFields...) {
			return fmt.Errorf("invalid fingerprint JSON: field %q is not one Cargo writes (its fields are lower case)", k)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
	}
	return nil
}

// u64Field decodes a number field as Cargo writes a u64: decimal digits, no quotes, sign, fraction or
// exponent (encoding/json would take a quoted number).
func u64Field(name string, raw json.RawMessage) (uint64, error) {
	digits := len(raw) > 0
	for _, c := range raw {
		digits = digits && c >= '0' && c <= '9'
	}
	if !digits {
		return 0, fmt.Errorf("field %s is %.40s, not an unsigned 64-bit number as Cargo writes it", name, raw)
	}
	v, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("field %s is %.40s, past the largest unsigned 64-bit number", name, raw)
	}
	return v, nil
}

// inFormatWords says a decoding error in the fingerprint format's words, not in those of the decoder's
// Go types ("cannot unmarshal number into Go struct field .dep_info of type string").
func inFormatWords(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	where := "the value"
	if f := strings.TrimPrefix(te.Field, "."); f != "" {
		where = "field " + f
	}
	return fmt.Errorf("%s is a JSON %s, not what Cargo writes there (offset %d)", where, te.Value, te.Offset)
}

func parseDep(raw json.RawMessage) (DepFingerprint, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil || len(parts) != 4 {
		return DepFingerprint{}, fmt.Errorf("want [pkg_id, name, public, hash], got %.80s", raw)
	}
	var d DepFingerprint
	pk, err1 := strconv.ParseUint(string(parts[0]), 10, 64)
	h, err2 := strconv.ParseUint(string(parts[3]), 10, 64)
	err3 := json.Unmarshal(parts[1], &d.Name)
	err4 := json.Unmarshal(parts[2], &d.Public)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return DepFingerprint{}, fmt.Errorf("want [u64, string, bool, u64], got %.80s", raw)
	}
	d.PkgID, d.Hash = pk, h
	return d, nil
}

func parseLocal(raw json.RawMessage) (LocalFingerprint, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		return LocalFingerprint{}, fmt.Errorf("want one externally tagged variant, got %.80s", raw)
	}
	var lf LocalFingerprint
	for k, v := range m {
		var err error
		switch k {
		case "CheckDepInfo":
			var x struct {
				DepInfo string `json:"dep_info"`
			}
			err = json.Unmarshal(v, &x)
			lf.CheckDepInfo = &struct{ DepInfo string }{x.DepInfo}
		case "RerunIfChanged":
			var x struct {
				Output string   `json:"output"`
				Paths  []string `json:"paths"`
			}
			err = json.Unmarshal(v, &x)
			lf.RerunIfChanged = &struct {
				Output string
				Paths  []string
			}{x.Output, x.Paths}
		case "RerunIfEnvChanged":
			var x struct {
				Var string  `json:"var"`
				Val *string `json:"val"`
			}
			err = json.Unmarshal(v, &x)
			lf.RerunIfEnvChanged = &struct {
				Var string
				Val *string
			}{x.Var, x.Val}
		case "Precalculated":
			var s string
			err = json.Unmarshal(v, &s)
			lf.Precalculated = &s
		default:
			lf.Unknown = k
		}
		if err == nil && k != "Precalculated" && lf.Unknown == "" && string(bytes.TrimSpace(v)) == "null" {
			err = errors.New("null, where Cargo writes an object")
		}
		if err != nil {
			return LocalFingerprint{}, fmt.Errorf("%s: %w", k, inFormatWords(err))
		}
	}
	return lf, nil
}

// FeatureList turns the Debug form `["a", "b"]` into a list. "" and `[]` give nil.
func FeatureList(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "[")
	s = strings.TrimSuffix(s, "]")
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if u, err := strconv.Unquote(f); err == nil {
			f = u
		}
		out = append(out, f)
	}
	return out
}

// DepInfoEntry is one file of Cargo's binary fingerprint dep-info.
type DepInfoEntry struct {
	// PackageRelative is true for a path relative to the package root (Cargo's PackageRootRelative);
	// false for a path relative to the build-dir root, or absolute (BuildRootRelative).
	PackageRelative bool
	Path            string
}

// DepInfo is a decoded `.fingerprint/<pkg>-<hash>/dep-<kind>-<name>` file.
type DepInfo struct {
	Files []DepInfoEntry
	Env   map[string]*string // nil value: the variable was unset
}

// ParseDepInfo decodes Cargo's binary dep-info (format v1 of `EncodedDepInfo` in
// src/cargo/core/compiler/fingerprint/dep_info.rs, cargo 1.95; all integers little-endian):
// magic u32 1 + u8 0xFF, u8 version 1, u32 file count, then per file u8 type, u32 length + path,
// u8 has-checksum (then u64 size, u32 length + "algo=hex"), then u32 env count, per env u32 length +
// key, u8 has-value, u32 length + value. Errors give the byte offset. Files older than the versioned
// format (no magic) are decoded with the pre-1.83 layout: u32 file count, u8 type, u32 length + path.
func ParseDepInfo(data []byte) (*DepInfo, error) {
	r := &byteReader{b: data}
	di := &DepInfo{Env: map[string]*string{}}
	versioned := len(data) >= 6 && binary.LittleEndian.Uint32(data) == 1 && data[4] == 0xFF
	if versioned {
		r.off = 5
		v, err := r.u8()
		if err != nil {
			return nil, err
		}
		if v != 1 {
			return nil, fmt.Errorf("dep-info format version %d at offset 5; this stalecheck knows version 1", v)
		}
	}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	if int(n) > len(data) {
		return nil, fmt.Errorf("file count %d at offset %d exceeds the %d-byte file", n, r.off-4, len(data))
	}
	for i := uint32(0); i < n; i++ {
		typ, err := r.u8()
		if err != nil {
			return nil, err
		}
		if typ > 1 {
			return nil, fmt.Errorf("unknown path type %d at offset %d", typ, r.off-1)
		}
		p, err := r.str()
		if err != nil {
			return nil, err
		}
		if versioned {
			has, err := r.u8()
			if err != nil {
				return nil, err
			}
			if has == 1 {
				if _, err := r.u64(); err != nil {
					return nil, err
				}
				if _, err := r.str(); err != nil {
					return nil, err
				}
			}
		}
		di.Files = append(di.Files, DepInfoEntry{PackageRelative: typ == 0, Path: p})
	}
	ne, err := r.u32()
	if err != nil {
		return nil, err
	}
	if int(ne) > len(data) {
		return nil, fmt.Errorf("env count %d at offset %d exceeds the %d-byte file", ne, r.off-4, len(data))
	}
	for i := uint32(0); i < ne; i++ {
		k, err := r.str()
		if err != nil {
			return nil, err
		}
		has, err := r.u8()
		if err != nil {
			return nil, err
		}
		if has == 1 {
			v, err := r.str()
			if err != nil {
				return nil, err
			}
			di.Env[k] = &v
		} else {
			di.Env[k] = nil
		}
	}
	if r.off != len(data) {
		return nil, fmt.Errorf("%d trailing bytes at offset %d", len(data)-r.off, r.off)
	}
	return di, nil
}

type byteReader struct {
	b   []byte
	off int
}

func (r *byteReader) need(n int) error {
	if n < 0 || r.off+n > len(r.b) {
		return fmt.Errorf("truncated at offset %d: need %d more bytes, have %d", r.off, n, len(r.b)-r.off)
	}
	return nil
}
func (r *byteReader) u8() (byte, error) {
	if err := r.need(1); err != nil {
		return 0, err
	}
	r.off++
	return r.b[r.off-1], nil
}
func (r *byteReader) u32() (uint32, error) {
	if err := r.need(4); err != nil {
		return 0, err
	}
	r.off += 4
	return binary.LittleEndian.Uint32(r.b[r.off-4:]), nil
}
func (r *byteReader) u64() (uint64, error) {
	if err := r.need(8); err != nil {
		return 0, err
	}
	r.off += 8
	return binary.LittleEndian.Uint64(r.b[r.off-8:]), nil
}
func (r *byteReader) str() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	if err := r.need(int(n)); err != nil {
		return "", err
	}
	r.off += int(n)
	return string(r.b[r.off-int(n) : r.off]), nil
}
