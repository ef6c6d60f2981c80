// Command truth runs stalecheck's ground-truth harness (package truth) and prints its table.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/truth"
)

func main() {
	quick := flag.Bool("quick", false, "the fixed sequence of a few shapes only (a few minutes)")
	seed := flag.Uint64("seed", 0, "seed of the random sequences (0: from the clock; printed)")
	random := flag.Int("random", 18, "random edits per shape after the fixed sequence")
	shapes := flag.String("shapes", "", "comma-separated shape names (default: all, or the quick ones)")
	jobs := flag.Int("j", 1, "shapes run at once")
	work := flag.String("work", filepath.Join(os.TempDir(), "stalecheck-truth"), "scratch folder")
	bin := flag.String("stalecheck", "", "the stalecheck binary to judge (required)")
	pure := flag.Bool("pure", false, "build every from-scratch oracle from nothing, registry crates included")
	details := flag.String("details", "", "write every wrong verdict to this file")
	smoke := flag.Bool("smoke", false, "only build each shape once and judge the clean build")
	list := flag.Bool("list", false, "list the shapes and exit")
	verbose := flag.Bool("v", false, "log each shape's progress on stderr")
	cover := flag.Bool("coverage", false, "add the Cargo-coverage set: shapes ar-append and so-leftover, the other-tree edit in every shape")
	layout := flag.String("layout", "legacy", "Cargo's build-dir layout: legacy (cargo 1.95's default) or new (-Zbuild-dir-new-layout)")
	corpus := flag.String("corpus", "sequences", "sequences (Cargo shapes through edit sequences) or events (every build system, each edit from a fresh state, scored by reason)")
	projects := flag.String("projects", "", "events: comma-separated project names (default: all)")
	pairs := flag.Int("pairs", 40, "events: seeded pairs of edits per project")
	repeat := flag.Int("repeat", 1, "events: runs of the single edits per project")
	flag.Parse()
	if *list {
		for _, s := range truth.Shapes() {
			fmt.Printf("%-20s %s\n", s.Name, s.Why)
		}
		for _, p := range truth.Projects() {
			fmt.Printf("%-20s (events, %s) %s\n", p.Name, p.System, p.Why)
		}
		return
	}
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "truth: --stalecheck PATH is required")
		os.Exit(2)
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano() % 1000000)
	}
	if *layout != "legacy" && *layout != "new" {
		fmt.Fprintln(os.Stderr, "truth: --layout is legacy or new")
		os.Exit(2)
	}
	if *corpus == "events" {
		runEvents(*work, *bin, *projects, *seed, *quick, *pairs, *repeat, *jobs, *verbose, *details)
		return
	}
	set := "core corpus"
	if *cover {
		set = "core corpus + Cargo-coverage set"
	}
	fmt.Printf("truth: seed %d (rerun with --seed %d), %s build-dir layout, %s\n", *seed, *seed, *layout, set)
	o := truth.Options{Work: *work, Stalecheck: *bin, Registry: "/usr/share/cargo/registry", Seed: *seed, Random: *random,
		Quick: *quick, Jobs: *jobs, Pure: *pure, Smoke: *smoke, NewLayout: *layout == "new", Coverage: *cover}
	if *shapes != "" {
		o.Shapes = strings.Split(*shapes, ",")
	}
	if *verbose {
		o.Log = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := truth.Run(ctx, o)
	if res != nil {
		res.Write(os.Stdout)
		if *details != "" {
			f, ferr := os.Create(*details)
			if ferr == nil {
				n := res.WriteWrong(f)
				f.Close()
				fmt.Printf("%d wrong verdict(s) written to %s\n", n, *details)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "truth:", err)
		os.Exit(2)
	}
	t := res.Table()
	if all := t[len(t)-1]; all.FalseErrors > 0 || all.Missed > 0 || all.CargoAgree != all.Cargo || all.WhichWrong > 0 || len(res.ScopeDisagreed) > 0 || len(res.CacheDisagreed) > 0 {
		os.Exit(1)
	}
}

func runEvents(work, bin, projects string, seed uint64, quick bool, pairs, repeat, jobs int, verbose bool, details string) {
	fmt.Printf("truth events: seed %d (rerun with --corpus events --seed %d)\n", seed, seed)
	o := truth.EventOptions{Work: work, Stalecheck: bin, Seed: seed, Quick: quick, Pairs: pairs, Repeat: repeat, Jobs: jobs}
	if projects != "" {
		o.Projects = strings.Split(projects, ",")
	}
	if verbose {
		o.Log = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := truth.RunEvents(ctx, o)
	if res != nil {
		res.Write(os.Stdout)
		if details != "" {
			if f, ferr := os.Create(details); ferr == nil {
				n := res.WriteWrong(f)
				f.Close()
				fmt.Printf("%d wrong judgement(s) written to %s\n", n, details)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "truth:", err)
		os.Exit(2)
	}
	t := res.Table()
	if t[len(t)-1].Wrong() > 0 {
		os.Exit(1)
	}
}
