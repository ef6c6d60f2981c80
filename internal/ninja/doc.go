// Package ninja reads a Ninja build folder into the neutral graph (graph.Graph): CMake's and Meson's
// Ninja trees and hand-written build.ninja files.
//
// How Ninja decides what to rebuild: build.ninja declares edges (a rule's command, its explicit,
// implicit and order-only inputs, its outputs). An edge is dirty when an output is missing, when an
// input is newer than its oldest output, or when its command differs from the one `.ninja_log` records
// for the output (Ninja hashes the command it ran). Headers are inputs only through depfiles: an edge
// with `deps = gcc` has the compiler write one, which Ninja folds into `.ninja_deps` (a binary log of
// each output's discovered inputs with the mtime it had) and deletes; `depfile =` without `deps` keeps
// the file beside the output. An edge with neither knows no header at all. Order-only inputs are built
// first but never make the edge dirty.
//
// Read parses the manifest (subninja and include, variable scopes, rule bindings), both logs and the
// depfiles, and asks ninja itself (`ninja -n -d explain`) what it would run, for evidence. ReadGraph turns
// it into one graph.Step per non-phony edge: Inputs with how each is known (declared, deps log,
// depfile, the compile command's source, the include scan) and whether Ninja watches it; the command
// from the manifest against the log's hash (Origin.OwnReason); Compiles for internal/includes to answer
// header searches again. generator.go recognises CMake's and Meson's trees and the files they
// regenerate from; compile.go parses compile commands; tool.go finds ninja.
package ninja
