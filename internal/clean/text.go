package clean

import (
	"fmt"
	"io"

	"github.com/stalecheck/stalecheck/internal/humanize"
	"github.com/stalecheck/stalecheck/internal/report"
)

// WriteText writes a plan (or what an execution did) for people: one line per item with its bytes,
// then the total. Every path goes through report.Escape.
func WriteText(w io.Writer, p *Plan) error {
	var err error
	line := func(format string, args ...any) {
		if err != nil {
			return
		}
		err = report.Line(w, format, args...)
	}
	prof := "none"
	if len(p.Profiles) > 0 {
		prof = fmt.Sprint(p.Profiles)
	}
	line("stalecheck clean: build folder %s (profiles cleaned: %s)", p.BuildDir, prof)
	for _, n := range p.Notes {
		line("  note: %s", n)
	}
	var n, skipped int
	for _, it := range p.Items {
		verb := map[string]string{Planned: "remove ", Removed: "removed", Skipped: "skip   "}[it.Status]
		if p.Executed && it.Status == Planned {
			verb = "kept   "
		}
		rel := it.Rel
		if it.RelBytes != "" {
			if r, e := it.RelPath(); e == nil {
				rel = r
			}
		}
		suffix := ""
		if it.Kind == KindBuildDir || it.Kind == KindFingerprint || it.Kind == KindIncremental || it.Kind == KindUnitDir {
			suffix = "/"
		}
		if it.Status == Skipped {
			skipped++
			line("  %s %s%s: %s", verb, rel, suffix, it.Reason)
			continue
		}
		n++
		line("  %s %12d  %s%s  (%s)", verb, it.Bytes, rel, suffix, it.What)
	}
	switch {
	case len(p.Items) == 0 && len(p.Profiles) == 0:
		line("nothing to remove: no profile folder could be judged (see the notes)")
	case len(p.Items) == 0:
		line("nothing to remove: every folder of the profiles cleaned is reached by a current binary")
	case p.Executed:
		line("removed %d item(s), %s; %d skipped", countStatus(p, Removed), bytesWords(p.FreedBytes), skipped)
	default:
		line("total: %d item(s), %s; %d skipped; dry run, nothing removed: pass --yes to remove", n, bytesWords(p.TotalBytes), skipped)
	}
	return err
}

// bytesWords writes a byte count, with its human form only when that says something else ("12 bytes",
// "570891 bytes (557.5 KiB)").
func bytesWords(n int64) string {
	s := fmt.Sprintf("%d bytes", n)
	if h := humanize.Bytes(n); h != s {
		s += " (" + h + ")"
	}
	return s
}

func countStatus(p *Plan, st string) int {
	n := 0
	for _, it := range p.Items {
		if it.Status == st {
			n++
		}
	}
	return n
}
