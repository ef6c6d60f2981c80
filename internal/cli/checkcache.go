package cli

import (
	"bytes"
	"fmt"
	"io"

	"github.com/stalecheck/stalecheck/internal/hugeheap"
	"github.com/stalecheck/stalecheck/internal/safeio"
	"github.com/stalecheck/stalecheck/internal/vcache"
)

// exitVerifyDiffers is the exit status under STALECHECK_VERDICT_CACHE=verify when a cached verdict and
// the full check disagree.
const exitVerifyDiffers = 3

// cachedCheck answers a check from the verdict cache (internal/vcache) when its key (invocation: the
// parsed command line, color decision; plus the working folder, environment and executable) has a
// valid entry, else runs full (recorded through internal/fsrec, reusing the memos of the last check
// that still hold) and stores its result. Under verify mode a hit, and a check that reused memos, run
// full as well (without memos) and fail (exit 3) when the two differ. output is check's --output.
func cachedCheck(st Streams, stateDir, invocation string, noCache bool, output string, full func() (*vcache.Result, error)) error {
	mode := vcache.ModeFromEnv(noCache)
	var vc *vcache.Cache
	var key vcache.Key
	if mode != vcache.Off {
		if vc = vcache.Open(stateDir, st.Err); vc != nil {
			vc.OnMiss = hugeheap.Advise // under way while the look-ups after the first change go on
			var err error
			if key, err = vcache.MakeKey("check", Version, []string{invocation}); err != nil {
				vc = nil
			}
		}
	}
	var res *vcache.Result
	if hit, ok := vc.Lookup(key); ok {
		res = hit
		if mode == vcache.Verify {
			fresh, err := full()
			if err != nil {
				return &ExitError{exitVerifyDiffers, fmt.Errorf("verdict cache (verify): the cache answered exit status %d, the full check failed: %v", hit.Exit, err)}
			}
			if d := resultDiff(hit, fresh); d != "" {
				return &ExitError{exitVerifyDiffers, fmt.Errorf("verdict cache (verify): the cached verdict differs from the full check: %s", d)}
			}
		}
	} else {
		if mode == vcache.Verify && vc.HasPrior() {
			// This check may reuse memos of the last one; below, it is compared with the same check
			// without them, run after it. A check records content baselines at a step's first sight,
			// which changes what the next check reports (evidence "content-baseline … recorded at"), so
			// a check without memos first settles the state folder: the two compared then see one state.
			if _, err := full(); err != nil {
				return err
			}
		}
		// The full check's heap grows to tens of megabytes: huge pages spare it most of its page faults
		// (a hit, which touches little, does not ask).
		hugeheap.Advise()
		rec := vc.Begin()
		var err error
		res, err = full()
		if err != nil {
			rec.End()
			return err
		}
		if mode == vcache.Verify && rec.Reused() > 0 {
			// The check reused memos of the last one (internal/vcache's memo.go): the same check with
			// none must say the same.
			rec.End()
			fresh, err := full()
			if err != nil {
				return &ExitError{exitVerifyDiffers, fmt.Errorf("verdict cache (verify): the check with memos gave exit status %d, the full check failed: %v", res.Exit, err)}
			}
			if d := resultDiff(res, fresh); d != "" {
				return &ExitError{exitVerifyDiffers, fmt.Errorf("verdict cache (verify): the check with memos differs from the full check: %s", d)}
			}
		}
		if vc != nil {
			vc.Store(key, rec, res)
		}
	}
	// An --output file that already holds this report is left alone: rewriting it would move its
	// folder's mtime, which a check that lists that folder (the build-system scan under PATH) records,
	// so every next check would miss.
	same := false
	if output != "" {
		if old, err := safeio.ReadFile(output, int64(len(res.Out))+1); err == nil && bytes.Equal(old, res.Out) {
			same = true
		}
	}
	if same {
		// nothing to write
	} else if err := writeOutput(st.Out, output, func(w io.Writer) error {
		_, err := w.Write(res.Out)
		return err
	}); err != nil {
		return &ExitError{2, err}
	}
	if len(res.Err) > 0 {
		st.Err.Write(res.Err)
	}
	if res.Exit != 0 {
		return &ExitError{Code: res.Exit}
	}
	return nil
}

// resultDiff names the first difference between a cached and a fresh result ("" when equal).
func resultDiff(cached, fresh *vcache.Result) string {
	if cached.Exit != fresh.Exit {
		return fmt.Sprintf("exit status %d cached, %d now", cached.Exit, fresh.Exit)
	}
	for _, p := range []struct {
		name string
		a, b []byte
	}{{"output", cached.Out, fresh.Out}, {"stderr", cached.Err, fresh.Err}, {"plan", cached.Extra, fresh.Extra}} {
		if bytes.Equal(p.a, p.b) {
			continue
		}
		al, bl := bytes.Split(p.a, []byte("\n")), bytes.Split(p.b, []byte("\n"))
		for i := 0; i < len(al) || i < len(bl); i++ {
			var x, y []byte
			if i < len(al) {
				x = al[i]
			}
			if i < len(bl) {
				y = bl[i]
			}
			if !bytes.Equal(x, y) {
				return fmt.Sprintf("%s line %d: cached %q, now %q\ncached lines %d-:\n%s\nnow:\n%s", p.name, i+1, clip(x), clip(y),
					max(1, i-5), around(al, i), around(bl, i))
			}
		}
		return p.name + " differs"
	}
	return ""
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// around returns the lines around line i (0-based), for a verify failure.
func around(lines [][]byte, i int) string {
	lo, hi := max(0, i-5), min(len(lines), i+6)
	if lo >= hi {
		return ""
	}
	return clip(bytes.Join(lines[lo:hi], []byte("\n")))
}
