package machine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// statLine is a /proc/PID/stat line of a process named name (with a space and a parenthesis, as comm
// may hold) with utime+stime = ticks.
func statLine(pid int, name string, ticks int) string {
	return strings.Join([]string{itoa(pid), "(" + name + ")", "S", "1", "1", "1", "0", "-1", "4194560", "0", "0", "0", "0",
		itoa(ticks), "0", "0", "0", "20", "0", "1", "0", "100", "0", "0"}, " ") + "\n"
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestProbeFromProcFiles: a probe over fake proc and sys files reads the static facts at Start and, at
// Finish, what other processes used during a 1 s run: the system was busy 250 ticks (2.5 s of CPU), the
// command used 1 s, so others used 1.5 CPUs, of which "cc1 -O2" 120 % and "rustc" 30 %.
func TestProbeFromProcFiles(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"proc/cpuinfo":                  "processor\t: 0\nmodel name\t: Example CPU @ 3.00GHz\nflags\t\t: fpu sse2 hypervisor avx2\n\nprocessor\t: 1\nmodel name\t: Example CPU @ 3.00GHz\n",
		"proc/loadavg":                  "0.50 0.40 0.30 1/200 999\n",
		"proc/stat":                     "cpu  1000 0 500 8000 100 0 0 0 0 0\ncpu0 1 2 3 4\nprocs_running 3\nprocs_blocked 0\n",
		"proc/meminfo":                  "MemTotal:       16384000 kB\nMemFree:         1000 kB\nMemAvailable:    8192000 kB\n",
		"proc/pressure/cpu":             "some avg10=12.50 avg60=3.00 avg300=1.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"proc/pressure/memory":          "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",
		"proc/10/stat":                  statLine(10, "cc1 -O2", 100),
		"proc/11/stat":                  statLine(11, "rustc", 50),
		"proc/12/stat":                  statLine(12, "idle)thing", 7),
		"proc/42/stat":                  statLine(42, "stalecheck", 10),
		"sys/devices/system/cpu/online": "0-1,4\n",
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "powersave\n",
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq": "2400000\n",
		"sys/class/dmi/id/sys_vendor":                          "QEMU\n",
	})
	p := start(root, 42)
	writeTree(t, root, map[string]string{
		"proc/loadavg": "1.75 0.60 0.35 2/201 1000\n",
		"proc/stat":    "cpu  1200 0 550 8100 100 0 0 0 0 0\nprocs_running 2\n", // 250 busy ticks more
		"proc/10/stat": statLine(10, "cc1 -O2", 220),                            // +120 ticks: 120 % of a CPU over 1 s
		"proc/11/stat": statLine(11, "rustc", 80),                               // +30
		"proc/12/stat": statLine(12, "idle)thing", 8),                           // +1: below 5 %
		"proc/42/stat": statLine(42, "stalecheck", 90),                          // itself: never named
		"proc/77/stat": statLine(77, "new", 500),                                // not there at Start
	})
	c := p.Finish(1e9, 1e9)
	// A run shorter than MinWindow: others' use is not measured, the pressure still says "loaded".
	if short := start(root, 42).Finish(1e8, 0); short.OtherCPUs != -1 || len(short.Busiest) != 0 || short.Loaded() != "CPU pressure 12%" {
		t.Errorf("short run: %+v, Loaded() %q", short, short.Loaded())
	}
	want := Conditions{CPUModel: "Example CPU @ 3.00GHz", CPUs: 3, Affinity: c.Affinity, Governor: "powersave", MHz: 2400,
		Kernel: c.Kernel, Virt: "qemu", Load1: 0.5, Load1At: 1.75, OtherCPUs: 1.5, OthersRunnable: 1,
		Busiest:  []Proc{{PID: 10, Name: "cc1 -O2", Percent: 120}, {PID: 11, Name: "rustc", Percent: 30}},
		MemTotal: 16384000 * 1024, MemAvailable: 8192000 * 1024, CPUPressure: 12.5, MemPressure: 0}
	if d := cmp.Diff(want, *c); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	if got := c.Loaded(); got != "other processes used 1.50 CPUs (cc1 -O2 120%, rustc 30%), CPU pressure 12%" {
		t.Errorf("Loaded() = %q", got)
	}
}

// TestProbeWithoutFiles: nothing readable leaves fields unknown, never an error or a panic.
func TestProbeWithoutFiles(t *testing.T) {
	c := start(t.TempDir(), 1).Finish(1e9, 0)
	if c.OtherCPUs != -1 || c.CPUPressure != -1 || c.Governor != "" || c.Busiest != nil || c.Load1 != -1 || c.OthersRunnable != -1 {
		t.Errorf("conditions from nothing: %+v", c)
	}
	if c.Loaded() != "" {
		t.Errorf("Loaded() = %q for unknown conditions", c.Loaded())
	}
}

// TestProbeOnThisMachine: the real files give a CPU count and a kernel.
func TestProbeOnThisMachine(t *testing.T) {
	c := Start().Finish(1e8, 0)
	if c.CPUs < 1 || c.Affinity < 1 || c.Kernel == "" {
		t.Errorf("conditions here: %+v", c)
	}
}

func TestParseGPUs(t *testing.T) {
	got := ParseGPUs("NVIDIA H100 80GB HBM3, 550.54.15, 1980, 2619, 34, 71.52\nNVIDIA H100 80GB HBM3, 550.54.15, [N/A], 2619, 35, [N/A]\n")
	want := []GPU{{Name: "NVIDIA H100 80GB HBM3", Driver: "550.54.15", SMClockMHz: 1980, MemClockMHz: 2619, TempC: 34, PowerW: 71.52},
		{Name: "NVIDIA H100 80GB HBM3", Driver: "550.54.15", MemClockMHz: 2619, TempC: 35}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestDifferences(t *testing.T) {
	a := &Conditions{CPUModel: "X", CPUs: 2, Affinity: 2, Governor: "performance", MHz: 3000, Kernel: "6.1", Virt: "kvm", OtherCPUs: 0.02}
	b := *a
	if d := Differences(a, &b); len(d) != 0 {
		t.Errorf("same conditions differ: %v", d)
	}
	b.OtherCPUs, b.Busiest, b.MHz, b.Governor = 1.2, []Proc{{PID: 9, Name: "cargo", Percent: 95}}, 2000, "powersave"
	want := []string{"governor performance vs powersave", "CPU frequency 3000 vs 2000 MHz",
		"load: quiet vs other processes used 1.20 CPUs (cargo 95%)"}
	if d := cmp.Diff(want, Differences(a, &b)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if Differences(nil, a) != nil {
		t.Error("an unknown side differs")
	}
}

// TestGPUsFromNvidiaSMI runs where nvidia-smi is (the accelerator machine; skipped elsewhere, CI
// included): every GPU it lists has a name, a driver, clocks and a temperature.
func TestGPUsFromNvidiaSMI(t *testing.T) {
	smi, err := exec.LookPath("nvidia-smi")
	if err != nil {
		t.Skip("no nvidia-smi on PATH")
	}
	gpus := QueryGPUs(smi)
	if len(gpus) == 0 {
		t.Fatal("nvidia-smi is on PATH but no GPU was read")
	}
	for i, g := range gpus {
		t.Logf("GPU %d: %+v", i, g)
		if !strings.Contains(g.Name, "NVIDIA") || g.Driver == "" || g.SMClockMHz <= 0 || g.MemClockMHz <= 0 || g.TempC <= 0 {
			t.Errorf("GPU %d: %+v", i, g)
		}
	}
	if got := <-GPUsAsync(); len(got) != len(gpus) {
		t.Errorf("GPUsAsync gave %d GPUs, QueryGPUs %d", len(got), len(gpus))
	}
}
