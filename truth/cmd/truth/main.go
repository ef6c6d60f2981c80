// Command truth runs stalecheck's ground-truth harness (package truth) and prints its tables: the event
// corpus (every build system, each edit judged from a fresh state, scored by reason) and the sequence
// corpus (Cargo workspaces through seeded edit sequences, judged also against Cargo's Dirty set).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/stalecheck/stalecheck/truth"
)

func main() {
	quick := flag.Bool("quick", false, "the event corpus's quick set: every build system, each edit kind once (about 2.5 minutes here); with --corpus all also the quick Cargo sequence (about 3.5)")
	seed := flag.Uint64("seed", 0, "seed of the random sequences and pairs (0: from the clock; printed)")
	random := flag.Int("random", 18, "sequences: random edits per shape after the fixed sequence")
	shapes := flag.String("shapes", "", "sequences: comma-separated shape names (default: all, or the quick ones)")
	jobs := flag.Int("j", 1, "shapes (projects) run at once, per corpus")
	work := flag.String("work", "", "scratch folder (default: stalecheck-truth in the temporary folder; with --quick in /dev/shm when it has room)")
	bin := flag.String("stalecheck", "", "the stalecheck binary to judge (required)")
	pure := flag.Bool("pure", false, "sequences: build every from-scratch oracle from nothing, registry crates included")
	details := flag.String("details", "", "write every wrong verdict to this file")
	smoke := flag.Bool("smoke", false, "sequences: only build each shape once and judge the clean build")
	list := flag.Bool("list", false, "list the shapes and projects and exit")
	verbose := flag.Bool("v", false, "log each shape's progress on stderr")
	cover := flag.Bool("coverage", false, "sequences: add the Cargo-coverage set: shapes ar-append and so-leftover, the other-tree edit in every shape")
	layout := flag.String("layout", "legacy", "sequences: Cargo's build-dir layout: legacy (cargo 1.95's default) or new (-Zbuild-dir-new-layout)")
	corpus := flag.String("corpus", "all", "all, events (every build system, each edit from a fresh state, scored by reason) or sequences (Cargo shapes through edit sequences, judged against Cargo too); --quick alone: events")
	projects := flag.String("projects", "", "events: comma-separated project names (default: all)")
	pairs := flag.Int("pairs", 40, "events: seeded pairs of edits per project")
	repeat := flag.Int("repeat", 1, "events: runs of the single edits per project")
	flag.Parse()
	if *list {
		for _, s := range truth.Shapes() {
			fmt.Printf("%-22s (sequences) %s\n", s.Name, s.Why)
		}
		for _, p := range truth.Projects() {
			fmt.Printf("%-22s (events, %s) %s\n", p.Name, p.System, p.Why)
		}
		return
	}
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "truth: --stalecheck PATH is required")
		os.Exit(2)
	}
	if *work == "" {
		root := os.TempDir()
		if *quick {
			root = truth.ScratchRoot(truth.QuickScratch)
		}
		*work = filepath.Join(root, "stalecheck-truth")
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano() % 1000000)
	}
	if *layout != "legacy" && *layout != "new" {
		fmt.Fprintln(os.Stderr, "truth: --layout is legacy or new")
		os.Exit(2)
	}
	// --quick alone is the event corpus's quick set (every build system, each edit kind once); the
	// sequence corpus's quick shape joins it with --corpus all.
	corpusSet := false
	flag.Visit(func(f *flag.Flag) { corpusSet = corpusSet || f.Name == "corpus" })
	if *quick && !corpusSet {
		*corpus = "events"
	}
	if *corpus != "all" && *corpus != "events" && *corpus != "sequences" {
		fmt.Fprintln(os.Stderr, "truth: --corpus is all, events or sequences")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	detailsFor := func(name string) string {
		if *details == "" || *corpus != "all" {
			return *details
		}
		return strings.TrimSuffix(*details, filepath.Ext(*details)) + "-" + name + filepath.Ext(*details)
	}
	type outcome struct {
		out  bytes.Buffer
		code int
	}
	var ev, sq outcome
	var wg sync.WaitGroup
	if *corpus != "sequences" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := truth.EventOptions{Work: filepath.Join(*work, "events"), Stalecheck: *bin, Seed: *seed, Quick: *quick, Pairs: *pairs, Repeat: *repeat, Jobs: *jobs}
			if *projects != "" {
				o.Projects = strings.Split(*projects, ",")
			}
			if *verbose {
				o.Log = os.Stderr
			}
			ev.code = runEvents(ctx, &ev.out, o, detailsFor("events"))
		}()
	}
	if *corpus != "events" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			set := "core corpus"
			if *cover {
				set = "core corpus + Cargo-coverage set"
			}
			fmt.Fprintf(&sq.out, "truth sequences: seed %d (rerun with --seed %d), %s build-dir layout, %s\n", *seed, *seed, *layout, set)
			o := truth.Options{Work: filepath.Join(*work, "sequences"), Stalecheck: *bin, Registry: "/usr/share/cargo/registry", Seed: *seed, Random: *random,
				Quick: *quick, Jobs: *jobs, Pure: *pure, Smoke: *smoke, NewLayout: *layout == "new", Coverage: *cover}
			if *shapes != "" {
				o.Shapes = strings.Split(*shapes, ",")
			}
			if *verbose {
				o.Log = os.Stderr
			}
			sq.code = runSequences(ctx, &sq.out, o, detailsFor("sequences"))
		}()
	}
	wg.Wait()
	os.Stdout.Write(ev.out.Bytes())
	if ev.out.Len() > 0 && sq.out.Len() > 0 {
		fmt.Println()
	}
	os.Stdout.Write(sq.out.Bytes())
	os.Exit(max(ev.code, sq.code))
}

// runSequences runs the sequence corpus; it returns the exit status: 0 all right, 1 a wrong verdict, 2
// the harness failed.
func runSequences(ctx context.Context, w *bytes.Buffer, o truth.Options, details string) int {
	res, err := truth.Run(ctx, o)
	if res != nil {
		res.Write(w)
		if details != "" {
			if f, ferr := os.Create(details); ferr == nil {
				n := res.WriteWrong(f)
				f.Close()
				fmt.Fprintf(w, "%d wrong verdict(s) written to %s\n", n, details)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(w, "truth sequences:", err)
		return 2
	}
	t := res.Table()
	if all := t[len(t)-1]; all.FalseErrors > 0 || all.Missed > 0 || all.CargoAgree != all.Cargo || all.WhichWrong > 0 || len(res.ScopeDisagreed) > 0 || len(res.CacheDisagreed) > 0 {
		return 1
	}
	return 0
}

// runEvents runs the event corpus; exit statuses as runSequences.
func runEvents(ctx context.Context, w *bytes.Buffer, o truth.EventOptions, details string) int {
	fmt.Fprintf(w, "truth events: seed %d (rerun with --corpus events --seed %d)\n", o.Seed, o.Seed)
	res, err := truth.RunEvents(ctx, o)
	if res != nil {
		res.Write(w)
		if details != "" {
			if f, ferr := os.Create(details); ferr == nil {
				n := res.WriteWrong(f)
				f.Close()
				fmt.Fprintf(w, "%d wrong judgement(s) written to %s\n", n, details)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(w, "truth events:", err)
		return 2
	}
	if t := res.Table(); t[len(t)-1].Wrong() > 0 {
		return 1
	}
	return 0
}
