package cli

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// examples are the Example sections of each command's --help: real command lines (TestHelpExamples
// parses every one against the command tree).
var examples = map[string]string{
	"check": `  stalecheck check                                   # the workspace at or above the working folder
  stalecheck check ~/src/prover --fail-on warning
  stalecheck check --format json | jq -r '.findings[].rule'
  stalecheck check --format sarif -o stalecheck.sarif  # for code scanning (GitHub: upload-sarif)
  stalecheck check --target-dir /tmp/target -v`,
	"which": `  stalecheck which target/release/gpu-prover
  stalecheck which target/release/gpu-prover --lib groth16_cuda --format json
  stalecheck which app --candidate a/libx.a --candidate b/libx.a`,
	"verify": `  stalecheck verify target/release/gpu-prover --contains CUZK_TIMING && echo "instrumented build"
  stalecheck verify target/release/app --symbol x_compute
  stalecheck verify target/release/app --matches target/release/build/fastmath-sys-0123456789abcdef/out/libx.a`,
	"run": `  stalecheck run -- ./target/release/gpu-prover --bench
  stalecheck run --repeat 5 --name msm -- sh -c "./target/release/gpu-prover 5"
  stalecheck run --binary target/release/app -- ./bench.sh
  stalecheck run --ledger postgres://bench@db/ledger --allow-stale -- ./target/release/app`,
	"runs": `  stalecheck runs
  stalecheck runs --name msm --limit 5
  stalecheck runs --format json | jq '.records[0].build'`,
	"diff": `  stalecheck diff 12 13
  stalecheck diff 12 13 --format json`,
	"explain": `  stalecheck explain prover-sys               # why the package has several build folders
  stalecheck explain cc@1.0.73 --ask-cargo
  stalecheck explain prover-sys/cuda/groth16_cuda.c   # why a file did or did not cause a rebuild
  stalecheck explain -w ~/src/prover prover-sys --format json`,
	"clean": `  stalecheck clean                             # print the plan
  stalecheck clean --profile release --incremental --yes
  stalecheck clean --format json > plan.json && stalecheck clean --plan plan.json --yes`,
	"report": `  stalecheck report -o bench.html                # every benchmark in the default ledger
  stalecheck report --name msm -o msm.html`,
	"trace": `  stalecheck trace -- cargo build --release      # record what the build really read
  stalecheck trace --show -- cargo build`,
}

// addExamples sets the Example of every command of the tree, and explain's completion of package
// names.
func addExamples(root *cobra.Command) {
	for _, c := range root.Commands() {
		if ex, ok := examples[c.Name()]; ok {
			c.Example = ex
		}
		if c.Name() == "explain" {
			c.ValidArgsFunction = completePackages
		}
	}
}

// completePackages completes explain's argument with the package names of the workspace's Cargo.lock
// (the nearest one at or above --workspace, default the working folder; read offline, bounded, never
// running Cargo): NAME, and NAME@VERSION for a name locked at several versions. A word that looks like a
// path (holds "/" or starts with ".") completes as a file name instead.
func completePackages(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if strings.Contains(toComplete, "/") || strings.HasPrefix(toComplete, ".") {
		return nil, cobra.ShellCompDirectiveDefault
	}
	start := "."
	if f := cmd.Flags().Lookup("workspace"); f != nil && f.Value.String() != "" {
		start = f.Value.String()
	}
	names, err := lockPackages(start)
	if err != nil {
		cobra.CompDebugln("stalecheck: "+err.Error(), true)
		return nil, cobra.ShellCompDirectiveDefault
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// lockPackages lists the package names of the nearest Cargo.lock at or above start (and NAME@VERSION
// for each version of a name locked more than once), sorted.
func lockPackages(start string) ([]string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return nil, err
	}
	for {
		p := filepath.Join(dir, "Cargo.lock")
		if _, err := os.Stat(p); err == nil {
			data, err := safeio.ReadFile(p, safeio.MaxRecord)
			if err != nil {
				return nil, err
			}
			var lock struct {
				Package []struct{ Name, Version string }
			}
			if _, err := toml.Decode(string(data), &lock); err != nil {
				return nil, &os.PathError{Op: "parse", Path: p, Err: err}
			}
			versions := map[string][]string{}
			for _, pk := range lock.Package {
				if pk.Name != "" {
					versions[pk.Name] = append(versions[pk.Name], pk.Version)
				}
			}
			var out []string
			for n, vs := range versions {
				out = append(out, n)
				if len(vs) > 1 {
					for _, v := range vs {
						out = append(out, n+"@"+v)
					}
				}
			}
			sort.Strings(out)
			return out, nil
		}
		if filepath.Dir(dir) == dir {
			return nil, os.ErrNotExist
		}
		dir = filepath.Dir(dir)
	}
}
