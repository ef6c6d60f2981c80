// Package browser opens pages in Debian's headless Chromium for tests, through chromedp (the DevTools
// protocol). Without a chromium executable the test skips with a message saying how to install it,
// except under CI (CI set), where it fails: CI must not silently skip the rendering tests.
package browser

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Executable finds Chromium (chromium, then chromium-browser, google-chrome) on PATH, or fails or skips
// the test as the package says.
func Executable(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI is set but no chromium is on PATH: the HTML report must be rendered in CI (apt-get install chromium; .ci/setup-debian installs it)")
	}
	t.Skip("no chromium on PATH: skipping the headless-browser rendering test (apt-get install -y chromium)")
	return ""
}

// New starts a headless Chromium with no network access beyond file:// pages and returns a context
// for chromedp.Run, cancelled (and the browser ended) at the test's cleanup. Every action on it has
// a deadline of timeout.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	exe := Executable(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox, // root in CI containers
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1240, 900),
		// No network: a page that asked for anything but file:// would fail to load it.
		chromedp.Flag("proxy-server", "http://127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	return ctx
}

// Open loads url in the browser of ctx and waits until an element matching ready (a CSS selector) is
// in the page.
func Open(t testing.TB, ctx context.Context, url, ready string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("chromium: open %s: %v", url, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.WaitReady(ready)); err != nil {
		t.Fatalf("chromium: %s: no %s in the page: %v", url, ready, err)
	}
}

// Eval evaluates a JavaScript expression in the page and decodes its JSON value into T.
func Eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("chromium: evaluate %s: %v", expr, err)
	}
	return v
}

// Screenshot returns a PNG of the first element matching sel (a CSS selector).
func Screenshot(t testing.TB, ctx context.Context, sel string) []byte {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(sel))
	if err != nil {
		t.Fatalf("chromium: screenshot of %s: %v", sel, err)
	}
	return png
}

// Viewport sets the page's window size in CSS pixels (as a window of that width shows it).
func Viewport(t testing.TB, ctx context.Context, width, height int64) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatalf("chromium: viewport %dx%d: %v", width, height, err)
	}
}

// FullScreenshot returns a PNG of the whole page at the current viewport's width.
func FullScreenshot(t testing.TB, ctx context.Context) []byte {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("chromium: full screenshot: %v", err)
	}
	return png
}
