package report

// ruleTexts hold, per rule, a one-sentence summary and the README's rules table (the severity and
// meaning columns, Markdown as written there), for SARIF's reportingDescriptor (shortDescription,
// fullDescription, help). TestSarifRuleTextsMatchREADME keeps them equal to README.md.
var ruleTexts = map[string]ruleText{
	"untracked-input-changed": {
		Short:    "A file a build script really compiled changed after its last run, and Cargo does not watch it.",
		Severity: "error; warning when the only clue is a native source lying in the package folder, or when the only clue is a step's command line naming the file and no content baseline from an earlier check tells an edit from a file the command writes; info when its content equals the content baseline, or differs from it only in comments and blank runs (the code digest of a C, C++, CUDA or Rust source: newlines and literals count, Rust doc comments are code)",
		Meaning:  "a file the build script's step really compiled changed after the step last ran, and Cargo does not watch it: it will not rebuild",
	},
	"pending-rebuild": {
		Short:    "A watched input changed: the next build redoes the unit, so the binary on disk is old.",
		Severity: "error; info when the input's content equals the content baseline or differs only in comments and blank runs (\"Cargo will redo X because its mtime changed; its content is the same as when X ran: the binary is not stale\"); info when the only reason is a dependency whose records are gone (`cargo clean -p`: Cargo rebuilds, nothing shows the code changed), or when the dependency's sources changed since (as another profile's units of it record them) but still have the content the removed units used (their content baselines, when stalecheck checked that build before the clean); error when one differs, when a source not modified since differs from what the removed units used (they were stale already), or when a variable the removed build-script run read has another value now (Cargo reruns it in this environment); warning when that cannot be told; info for a unit whose first build failed with no success on record (a folder with rustc's diagnostics but no hash file: Cargo builds it next)",
		Meaning:  "a watched input changed (rerun-if-changed paths, Cargo's dep-info for Rust sources, the package scan of a script with no rerun-if line, a dependency rebuilt since), or `Cargo.toml` now gives a `[package]` field another value than the one the unit's code reads (`env!(\"CARGO_PKG_DESCRIPTION\")`, the version: rustc's env-deps in the unit's dep-info): the next build redoes the unit, so the binary you have is old. A dependency counts as rebuilt as Cargo counts it: its newest output is newer than the unit's newest output, except that a unit built only as an rlib is compared with a library dependency's `.rmeta` alone (pipelining starts it from that file and writes the dependency's `.rlib` later). `Cargo.toml` or `.cargo/config.toml` edited since the program's last build in settings its units' fingerprints hold (its profile, features, rustflags, an `[env]` variable its code reads), against what an earlier check kept; a warning for other settings or with nothing kept",
	},
	"untracked-env-changed": {
		Short:    "An environment variable a build script's tools read has another value now, and Cargo does not watch it.",
		Severity: "error",
		Meaning:  "a build script's tools read an environment variable (cc-rs logs each lookup in `output`: `CFLAGS = None`) that the script does not declare with `rerun-if-env-changed`, and the environment stalecheck runs in gives it another value: Cargo will not rerun the script, so the next build keeps what was compiled with the old value. Variables Cargo sets for build scripts (`TARGET`, `OPT_LEVEL`, `CARGO_*`, …) are not compared. Run `check` in the shell you build in",
	},
	"binary-older-than-input": {
		Short:    "A binary is older than a library its build links.",
		Severity: "error; info when the root provably holds the library's current content",
		Meaning:  "a binary (root) is older than a static library its build scripts link or an rlib/library of a dependency unit. Judged by content: a linked binary by every code and data section of the archive's objects (located by symbol, relocation fields masked), its strings, symbol sizes and fatbinary entries; an rlib by the objects it bundles. A touched or identically rebuilt archive is info; other content is an error saying what differs; where content cannot decide (stripped binary with code to compare, LTO, `--no-native`, a dependency's Rust library) it stays an error that says why",
	},
	"changed-with-older-mtime": {
		Short:    "An input was rewritten with its mtime set back, so Cargo calls the step fresh.",
		Severity: "error; warning when the only clue is a native source lying in the package folder",
		Meaning:  "an input of a live step whose mtime is not newer than the step's run (so Cargo calls it fresh) but whose ctime is, and whose content differs from the content baseline: it was rewritten and its mtime set back (`cp -p` of a saved copy, `rsync -t`, `tar`), so the binary was built from other content. Without a baseline nothing is claimed: a note (`-v`, JSON `notes`) lists such files and says their content is unknown (a `cp -a` copy has new ctimes everywhere)",
	},
	"linked-copy-not-newest": {
		Short:    "The binary holds an older copy of a library than the newest one its package made.",
		Severity: "error; info when the copy inside is the one the binary's own configuration makes (records and bytes agree; the newer copy belongs to another configuration, e.g. after a feature toggle)",
		Meaning:  "content evidence shows the binary holds an older copy of a library than the newest copy the same package's build scripts made in its profile folder (newest = latest run `output`); checked only where duplicates exist, cached by inode, size and mtime in the state folder",
	},
	"edited-copy-not-built": {
		Short:    "A registry, vendored, git or unapplied [patch] copy of a package was edited, and no build will use the edit.",
		Severity: "error",
		Meaning:  "a copy of a package was edited after the package's units were last built, and no build will use the edit: a registry, directory (vendored) or git source, which Cargo treats as immutable (fix: a `[patch]` path), or a `[patch]` path Cargo does not apply (`[[patch.unused]]` in `Cargo.lock`), naming where Cargo takes the package from",
	},
	"duplicate-native-artifact": {
		Short:    "The same library file exists in the OUT_DIRs of several build-script runs of one profile.",
		Severity: "warning",
		Meaning:  "the same library file name exists in the `OUT_DIR`s of several build-script runs of one profile folder; says which configuration made each copy and which binaries are built from which",
	},
	"rerun-scan-disabled": {
		Short:    "A build script's rerun-if lines switch off Cargo's package scan and miss some of its native sources.",
		Severity: "warning; info when every such source is tied to the step by a record (command line, depfile, DWARF, include scan, archive member, build-script source), so that an edit to it is an `untracked-input-changed` error and a healthy build carries no warning",
		Meaning:  "a path package's build script printed only `rerun-if-env-changed` lines, or `rerun-if-changed` lines that miss some of its native sources, switching off Cargo's whole-package scan",
	},
	"output-outside-out-dir": {
		Short:    "A build script links from a folder of its package or workspace outside OUT_DIR.",
		Severity: "warning",
		Meaning:  "a build script links from (or searches) a folder of its package or workspace outside `OUT_DIR` (e.g. `make` leaving `native/libfoo.a`): `cargo clean` never removes it and every profile links the same file",
	},
	"link-search-shadowing": {
		Short:    "A library file name is in several link-search folders of one binary's build scripts.",
		Severity: "warning",
		Meaning:  "a library file name is in several link-search folders of one binary's build scripts; Cargo's `-L` order is not on disk, so it is reconstructed (the binary's own package first, then dependencies sorted by package name, `OUT_DIR` paths before others; cargo ≥ 1.88) and said so, with the copy the binary holds by content",
	},
	"linked-library-shadowed": {
		Short:    "The library file the linker takes for a link name is not the one the build script last built.",
		Severity: "error; warning when the binary's bytes cannot prove it (a static copy, `--no-native`)",
		Meaning:  "for a `rustc-link-lib` name, the file GNU ld takes is not the library the last run of the build script built, and no last run wrote it: a shared object left in `OUT_DIR` by an earlier configuration, which ld takes before the new `.a` in the same folder (a link without `static=`), or a copy in a folder outside the target folder (another crate's probe printed it) that comes first in the reconstructed `-L` order. ld searches `LIBRARY_PATH` and its default folders only after every `-L` folder, so they never shadow a copy on the search path. An error when the binary's `DT_NEEDED` entries name the shared object it took",
	},
	"unkeyed-output": {
		Short:    "A build script of several configurations writes one file outside OUT_DIR at one path.",
		Severity: "warning",
		Meaning:  "a build script of several configurations (feature sets, profiles, flags) writes a file at one path outside `OUT_DIR`, in a folder its runs point consumers at (a `cargo:include=` folder under `target/`, `-I`/`-o` folders of its logged compiles, link-search folders outside the package): the path carries no configuration, so the last one built wins and the others' consumers read its version. It names every run and the last writer (the file's mtime lies within that run, from `output`'s mtime to `root-output`'s)",
	},
	"other-config-library": {
		Short:    "A library linked from outside OUT_DIR was built for another configuration of its build script.",
		Severity: "error; warning when the script's source names none of the settings that differ",
		Meaning:  "a live build script links a library from outside `OUT_DIR` that holds files its last run did not write (older than the run's start) and that were written during the run of another configuration of the same script (the file's mtime lies within that run, from `output`'s mtime to `root-output`'s): the library itself, or an object it archives when the script drives a build there (`make -C csrc`) that found nothing to redo, as nothing it watches changed with the configuration. Every binary linked since holds what was built for the other configuration. An error when the script's source names a setting the configurations differ in (`CARGO_FEATURE_<NAME>`, `PROFILE`, `OPT_LEVEL`, `DEBUG`, `CARGO_ENCODED_RUSTFLAGS`, `TARGET`): it hands the setting on, and those files did not get it",
	},
	"built-in-other-tree": {
		Short:    "A build-script run was made in another copy of this workspace that shares the target folder.",
		Severity: "error; warning when the inputs here have the same bytes",
		Meaning:  "a live build-script run was made in another copy of this workspace sharing the target folder (two git worktrees with one `CARGO_TARGET_DIR`): Cargo hashes path packages by their workspace-relative path and its records keep relative paths, so the copy's build is Fresh and reuses the run; the absolute paths its output names (a `rustc-env` value with its `CARGO_MANIFEST_DIR`, sources on logged compiler commands) or the DWARF of the objects it left in `OUT_DIR` (cc compiles in the script's package folder) show the other tree, whose paths the binary carries. Also an uplifted binary a build there replaced: its `<name>.d` names that tree, or, once a no-op build here rewrote the .d, its DWARF compile units (`DW_AT_comp_dir`) do. An error when an input here differs from the other tree's copy. A binary without debug info whose .d was rewritten is not told apart (Cargo's and rustc's dep-info are relative); an object compiled in a copy that no longer exists is judged as its counterpart here",
	},
	"out-dir-leftover": {
		Short:    "An OUT_DIR file the last run of the script did not rewrite is still used by the build.",
		Severity: "warning",
		Meaning:  "an `OUT_DIR` file the last run of the script did not rewrite (older than the run's start) that the build still uses (a live unit's dep-info names it, or it is a linked library). Judged by what the last run wrote, not by mtime alone: a file its records show it installed or rebuilt is not a leftover, whatever its mtime (CMake's install step keeps whole-second or source mtimes: `-- Installing:` and `-- Up-to-date:` lines in `output`, an `install_manifest.txt` the run wrote, files of a build tree a `running: cd \"<folder>\" && … cmake`/`make` line worked in)",
	},
	"last-build-failed": {
		Short:    "The last build of a unit failed or was interrupted.",
		Severity: "warning",
		Meaning:  "the last attempt of a unit failed or was interrupted (empty hash file, no hash file but rustc's `output-` diagnostics, `invoked.timestamp` newer than `output`, no `output`); it is not called stale for that alone, but an input changed since its last success is still reported as `pending-rebuild` (the binary on disk predates it)",
	},
	"unreadable-record": {
		Short:    "A build record could not be read or parsed.",
		Severity: "warning",
		Meaning:  "a fingerprint, hash file, dep-info, build-script output, archive, package `Cargo.toml` or `Cargo.lock` could not be read or parsed, or an `OUT_DIR` entry is a FIFO or a device (it is still counted as there, e.g. for `duplicate-native-artifact`); names the file and why (with the byte offset for binary formats). Every read is bounded and never waits on a FIFO",
	},
	"orphaned-build-dir": {
		Short:    "A build folder no binary reaches.",
		Severity: "info",
		Meaning:  "a `build/<pkg>-<hash>` folder no root reaches, with the bytes it holds (hard links counted once): exactly the build folders `clean` removes (a failed unit of a live configuration is live). Profile folders with no root at all (e.g. after only `cargo check`), with a root not tied to its unit, or with an unreadable fingerprint record are not judged",
	},
	"missing-depfile": {
		Short:    "A Make or Ninja compile has no dependency file its build system reads, so header edits go unseen.",
		Severity: "warning",
		Meaning:  "a Make or Ninja compile of a C, C++ or CUDA source with no dependency file its build system reads: the rule names none (a Ninja edge with neither `depfile` nor `deps`, nor a `dyndep` file its build's own scan writes the headers into; a Make object with no `.d` beside it), or names one the compiler never writes (Meson 1.0's CUDA rule calls nvcc without `-MD`): an edit of a header it includes goes unseen. Evidence: the rule and where it is defined, the compile command, the depfile path and that it is absent, the headers other clues (DWARF, the include scan) show the compile read",
	},
	"path-lookup-changed": {
		Short:    "A program (or header) a step looked up in a traced build would be found elsewhere now.",
		Severity: "warning",
		Meaning:  "a step's process searched for a program on PATH (or a compiler for a header in its include folders) in a build traced by `stalecheck trace`, and the same search finds something else now: a tool that now exists earlier on PATH, one where none was found (a build script that looks for `nvcc` and writes an empty kernel table without it), or none where one was; searched again on the traced PATH and on the PATH `check` runs with (after the toolchain folders rustup put first). Build systems do not watch such searches (Cargo reruns a script for PATH only with `rerun-if-env-changed=PATH`, never for a file appearing in a PATH folder), so the step's outputs still follow the old answer. Warning, not error: whether the step writes something else with the new answer is not knowable from the trace. Evidence: the trace file, the process (pid, program), the folders tried, both answers; used only while the step has not run again since the trace",
	},
	"duplicate-archive-member": {
		Short:    "An archive holds several members of one name; the linker takes the first.",
		Severity: "error",
		Meaning:  "an archive the build made holds two or more members of one name (`ar q` appends an object again without replacing it); GNU ld takes the copy the archive's symbol table names first, the oldest one appended. Each copy is listed (position, offset, size, digest, symbols), with the copy equal to the object file now and, per binary, the copy its bytes hold. Error when a binary holds an old copy; warning when the copies differ but that cannot be told, or when the copy it holds was compiled by a run whose inputs had the content they have now (a `cp -p` restore to the first copy's version: the content baseline of each run keeps its archive members' digests); info when they are identical. Byte-identical copies a binary matches count as one. After `cargo clean -p` removes the archive, the removed run's baseline still tells that binaries linked after it hold an older copy (`pending-rebuild`, error)",
	},
	"archive-member-without-rule": {
		Short:    "A Make archive holds a member no rule makes any more.",
		Severity: "warning",
		Meaning:  "a Make archive holds a member no rule makes any more (`ar rcs lib.a $^` keeps the object of a removed source), so whatever links the archive may still get its symbols; fix: remove the archive and make again",
	},
}
