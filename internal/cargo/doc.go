// Package cargo reads what Cargo left in a target folder into the neutral graph (graph.Graph), without
// running Cargo.
//
// How Cargo decides what to rebuild (cargo 1.95; ../shared/docs/cargo-target-dir.md holds the detail):
// every unit — a rustc compile of one target, a build script's compile, a build script's run — has a
// fingerprint folder `<profile>/.fingerprint/<package>-<hash>`. The hash is the unit's metadata (package
// id with its version, features, profile, target, rustc, dependencies' hashes); a change of any of them
// is a new unit in a new folder, and the old one stays on disk. Inside, the hash file holds the unit's
// fingerprint hash (Cargo truncates it when the unit starts and rewrites it on success), the JSON
// fingerprint holds what went into it (`local`: a dep-info file for a compile, rerun-if-changed paths
// and variables, or the Precalculated package scan, for a run), and `dep-<target>` is Cargo's binary
// dep-info: the files the compile read, the environment variables its code read (rustc's env-deps). A
// unit is dirty when an input's mtime is newer than its reference (the dep-info file for a compile, the
// run's `output` file, whose mtime is the run's start), when a watched variable changed, or when a
// dependency was rebuilt after it. A build script's run writes `output` (its `cargo:` lines, and what its
// tools printed: the cc crate's `running:` commands, the cmake crate's configure and build lines) and
// `root-output` (its OUT_DIR), and whatever it builds goes into OUT_DIR, or anywhere it likes.
//
// Read rebuilds that picture: one graph.Step per unit (Origin *unit.Unit with the fingerprint's
// facts), its Reference and watched Inputs as Cargo compares them, and, for a run, what Cargo does not
// see: the native sources its logged compiles, depfiles, DWARF line tables, archive members and
// include scans tie to it, the folders it points consumers at and what it wrote outside OUT_DIR. The
// roots are the uplifted binaries and libraries, tied to their units by inode, content or name. The
// rules (internal/check) judge that graph; a Make or Ninja build a run drives in a folder of its package
// is attached by internal/systems (graph.AttachDriven).
//
// Files: locate.go finds the target and build folders (CARGO_TARGET_DIR, config, --target-dir); dirs.go
// names the folders of both build-dir layouts (legacy, and -Zbuild-dir-new-layout); read.go walks the
// profile folders into units and ties the roots; fingerprint.go decodes hash files, JSON
// fingerprints and binary dep-info; output.go parses a run's output; details.go fills each unit's inputs;
// include.go scans the #include lines of compiles no depfile covers; native.go and nativecache.go read archives and objects; outside.go finds writes outside OUT_DIR;
// othertree.go runs made in another copy of the workspace; source.go maps units to packages and their
// sources; manifest.go the CARGO_PKG_* values a package manifest gives.
package cargo
