// Command gentarget writes a synthetic Cargo 1.95 workspace and its target/release folder for
// stalecheck's benchmarks (see package gentarget).
//
//	go run ./bench/gentarget/cmd/gentarget -out bench/out/tree [-units 2000] [-files 200000] [-stale 0]
//
// It writes OUT/ws (workspace, sources, target/) and OUT/cargo-home (registry sources); run
// stalecheck with CARGO_HOME=OUT/cargo-home so that registry paths are recognised.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/stalecheck/stalecheck/bench/gentarget"
)

func main() {
	var opt gentarget.Options
	out := flag.String("out", "", "folder to write (must be empty or missing)")
	flag.IntVar(&opt.Units, "units", 2000, "minimum number of Cargo units")
	flag.IntVar(&opt.Files, "files", 200000, "minimum number of files under the target folder")
	flag.IntVar(&opt.Stale, "stale", 0, "touch this many native sources newer than the build (0: clean tree)")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Float64Var(&opt.RegistryShare, "registry", 0.5, "share of library packages from the registry (negative: none)")
	flag.Float64Var(&opt.IncrementalShare, "incr", 0.5, "share of filler files in incremental/ rather than OUT_DIRs (negative: none)")
	flag.StringVar(&opt.CC, "cc", "cc", `C compiler for the object templates ("-": none, members are not ELF)`)
	flag.IntVar(&opt.BinRodataKB, "bin-rodata-kb", 2048, "KiB of string literals standing in for each binary's Rust code")
	flag.BoolVar(&opt.ToggleAfter, "toggle-after", false, "build the feature-toggle copies after the default configuration (docs §3 order)")
	flag.BoolVar(&opt.TieLinks, "tie-links", false, "make the two runs that share a fingerprint hash links dependencies of other build scripts")
	flag.IntVar(&opt.Workers, "workers", 8, "parallel file writers")
	jsonOut := flag.Bool("json", false, "print the result as JSON")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gentarget: -out is required")
		os.Exit(2)
	}
	opt.Seed = *seed
	opt.Log = os.Stderr
	start := time.Now()
	res, err := gentarget.Run(*out, opt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentarget:", err)
		os.Exit(1)
	}
	if *jsonOut {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
		return
	}
	fmt.Printf("workspace   %s\ntarget      %s\ncargo home  %s\n", res.Workspace, res.TargetDir, res.CargoHome)
	fmt.Printf("packages %d, units %d (%d live), roots %d, feature-toggle copies %d, old-toolchain copies %d\n",
		res.Packages, res.Units, res.LiveUnits, res.Roots, res.Variants, res.OldToolchain)
	fmt.Printf("files under target %d, source files %d, ELF objects %v, linked binaries %v, written in %s\n",
		res.Files, res.SourceFiles, res.ELF, res.LinkedBins, time.Since(start).Round(time.Millisecond))
	for _, t := range res.Touched {
		fmt.Printf("touched %s\n", t)
	}
}
