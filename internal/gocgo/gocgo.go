// Package gocgo reads a Go module that uses cgo, and the Go binaries built from it, without building
// anything, and says which C inputs of the binary Go's build cache does not watch.
//
// Sources of each fact (observed with Go 1.26.8, gcc 12, GNU ld):
//
//   - Packages, their files and cgo flags: `go list -e -json=<fields> -deps ./...`, run in the module
//     root under a deadline with GOPROXY=off, GOTOOLCHAIN=local, GOFLAGS=-mod=readonly (-mod=vendor
//     when vendor/modules.txt exists) and GOWORK=off unless a go.work lies at or above the module (see
//     [Read]). `go list` expands ${SRCDIR} in the Cgo*FLAGS fields; paths are cleaned here.
//   - What Go's cache hashes: cmd/go/internal/work/exec.go, (*Builder).buildActionID: the content of
//     every file the package lists (GoFiles, CgoFiles, CFiles, CXXFiles, FFiles, MFiles, HFiles, SFiles,
//     SysoFiles, SwigFiles, SwigCXXFiles, EmbedFiles; names relative to the package folder) and the cgo
//     flag strings (CPPFLAGS, CFLAGS, LDFLAGS) with the C compiler's identity; linkActionID adds none
//     of the files those flags name. So a header reached through -I that is not one of the package's
//     HFiles (outside the package folder, or in a subfolder of it), and a library named by -L/-l or by
//     path, change nothing Go compares: `go build` reuses its cache and the binary keeps the old code.
//   - Binaries: debug/buildinfo (module path, main package, settings such as CGO_ENABLED, CGO_CFLAGS,
//     CGO_LDFLAGS, -ldflags, -tags, vcs.revision, vcs.modified, vcs.time) and the ELF note
//     ".note.go.buildid" (owner "Go", type 4: the build ID "actionID/…/contentID" that changes exactly
//     when the binary is linked again).
//
// The reference time of a Go binary is its mtime (nanoseconds). Beware: an up-to-date `go build -o B`
// or `go install` sets B's mtime to now without linking (exec.go, BuildInstallFunc: "do a
// best-effort update of the file times to make it look like we rewrote a.Target"), so after such a
// build a header edited before it is older than the binary although the binary lacks the edit. Two
// kinds of evidence survive that touch and are offered: [Holds] on every linked static library (the
// binary's bytes against the archive's current content), and a content [Baseline] of every unwatched
// input keyed by the binary's Go build ID (a digest that moved while the build ID stayed is an edit
// the binary does not hold).
//
// Shapes for the join into the neutral graph: each [Package] with cgo is a step ("go build of a cgo
// package": declared inputs = what Go hashes, discovered inputs = headers through the include scan and
// libraries through the LDFLAGS, each [Input] with its [Clue]s); each [Binary] with its [Link] is a
// step whose reference is the binary's mtime, whose inputs are the packages' outputs and the libraries;
// a library inside a Cargo target folder carries a [CargoOrigin] (the edge into the Cargo graph).
package gocgo

// FileKind is what an input file is.
type FileKind string

const (
	KindGo       FileKind = "go-source"      // a .go file without import "C"
	KindCgo      FileKind = "cgo-source"     // a .go file with import "C" (its preamble is C)
	KindC        FileKind = "c-source"       // .c, .cc, .cpp, .m, .f, .s, .S, .swig files of the package
	KindHeader   FileKind = "header"         // a C/C++ header
	KindSyso     FileKind = "syso"           // a .syso object linked as is
	KindEmbed    FileKind = "embed"          // a //go:embed file
	KindArchive  FileKind = "static-library" // lib*.a (or any .a named by path)
	KindShared   FileKind = "shared-library" // lib*.so
	KindObject   FileKind = "object"         // a .o named by path in LDFLAGS
	KindLinkFile FileKind = "link-input"     // another file named by path in LDFLAGS
)

// How says how an input is known.
type How string

const (
	// HowGoList: `go list` names it in one of the package's file lists (Go hashes its content).
	HowGoList How = "go-list"
	// HowIncludeScan: reached by following #include lines through the package's search folders.
	HowIncludeScan How = "include-scan"
	// HowLDFlags: named by -L/-l or by path in the package's #cgo LDFLAGS (or the binary's
	// CGO_LDFLAGS / -extldflags settings).
	HowLDFlags How = "ldflags"
)

// Clue is one piece of evidence for an input: how it is known and a sentence naming where
// ("CgoFiles of example.com/m/calc", "#include \"api.h\" at calc/calc.go:6 through -I /m/include",
// "-L /m/c -lcalc in #cgo LDFLAGS of example.com/m/calc").
type Clue struct {
	How    How    `json:"how"`
	Detail string `json:"detail"`
}

// Input is one file a step reads. Size is in bytes, MTimeNS in nanoseconds since the Unix epoch; both
// are zero and Err is set when the file could not be stat'ed.
type Input struct {
	Path  string   `json:"path"` // absolute, cleaned
	Kind  FileKind `json:"kind"`
	Clues []Clue   `json:"clues"`
	// Watched is true when Go's action ID hashes the file's content (an edit makes `go build` redo the
	// package), false for what Go's cache ignores.
	Watched bool   `json:"watched"`
	Size    int64  `json:"size"`
	MTimeNS int64  `json:"mtime_ns"`
	Err     string `json:"error,omitempty"`
	// Cargo is set for a library that lies in a Cargo target folder.
	Cargo *CargoOrigin `json:"cargo,omitempty"`
}

// Flags are a package's cgo flags as `go list` gives them (${SRCDIR} expanded), one word each.
type Flags struct {
	CPPFLAGS []string `json:"cppflags,omitempty"`
	CFLAGS   []string `json:"cflags,omitempty"`
	CXXFLAGS []string `json:"cxxflags,omitempty"`
	FFLAGS   []string `json:"fflags,omitempty"`
	LDFLAGS  []string `json:"ldflags,omitempty"`
	// PkgConfig are the `#cgo pkg-config:` names; the scan runs pkg-config --cflags for their include folders.
	PkgConfig []string `json:"pkg_config,omitempty"`
}

// Package is one package of the module's build, as `go list -deps` lists it. For a package with cgo
// (Cgo), it is a step: Declared are the files Go hashes, Discovered the headers and libraries it does
// not. A Local package without cgo is a step with its Declared files only. Packages of the standard
// library are listed (Standard) but never scanned, and those of the module cache without cgo are not
// read either (their files are read-only copies of a version).
type Package struct {
	ImportPath string `json:"import_path"`
	Name       string `json:"name"`
	Dir        string `json:"dir"`
	Standard   bool   `json:"standard,omitempty"`
	// Module is the path of the module the package belongs to ("" for the standard library).
	Module string `json:"module,omitempty"`
	Cgo    bool   `json:"cgo,omitempty"`
	// Local is true for a package without cgo whose files are the user's to edit: one of the main
	// module, or of a module replaced by a folder (a replace directive naming a path), not one of the
	// module cache's read-only copies. It is a step too, with the files Go hashes as Declared.
	Local bool  `json:"local,omitempty"`
	Flags Flags `json:"flags"`
	// Deps are the import paths of every package it depends on, transitively (go list's Deps).
	Deps []string `json:"-"`
	// Declared is set for non-standard cgo packages and Local ones, Discovered for cgo packages only.
	Declared   []Input `json:"declared,omitempty"`
	Discovered []Input `json:"discovered,omitempty"`
	// IncludeDirs are the header search folders, in the compiler's order (-iquote, -I, -isystem,
	// -idirafter), absolute and cleaned; LibDirs the -L folders in order.
	IncludeDirs []string `json:"include_dirs,omitempty"`
	LibDirs     []string `json:"lib_dirs,omitempty"`
	// Unresolved are #include names found in no search folder (system headers, or missing ones) and
	// -l names found in no -L folder (system libraries), each with where it was seen.
	Unresolved []string `json:"unresolved,omitempty"`
	// Problems are what could not be read (a source, a folder), and go list's own error for the package.
	Problems []string `json:"problems,omitempty"`
}
