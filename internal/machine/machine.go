// Package machine records the conditions a timing was taken under, so that two timings are compared
// knowing whether the machine was the same and equally quiet.
//
// A Probe is started just before the command runs and finished just after it. Start reads what does not
// change during a run (CPU model, online CPUs, this process's affinity, frequency governor, kernel,
// virtualisation, memory) and the counters that do: the system's CPU time (/proc/stat), the 1-minute
// load average and each process's CPU time (/proc/PID/stat). Finish reads the counters again: the CPU
// time the whole system spent during the run less the command's own user and system time is what other
// processes used (in CPUs: 1.0 is one core kept busy for the whole run), and the processes whose CPU
// time grew most are named. Pressure stall figures (/proc/pressure) and the current frequency of the
// first CPU are read at the end. With nvidia-smi on PATH, the GPUs' names, driver, clocks, temperature,
// power and compute processes are queried (GPUsAsync) before anything is timed, with a time limit.
//
// Everything is read from the proc and sys files; a file that cannot be read leaves its field empty
// (a container without /sys/devices/system/cpu/cpu0/cpufreq has no governor). Nothing here fails a run.
package machine

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/subproc"

	"golang.org/x/sys/unix"
)

// Conditions are the machine's state during one run.
type Conditions struct {
	CPUModel string `json:"cpu_model,omitempty"`
	CPUs     int    `json:"cpus"`     // online CPUs
	Affinity int    `json:"affinity"` // CPUs this process (and so the command) may run on
	Governor string `json:"governor,omitempty"`
	// MHz is the first CPU's current frequency at the end of the run (scaling_cur_freq), 0 when unknown.
	MHz     float64 `json:"mhz,omitempty"`
	Kernel  string  `json:"kernel,omitempty"`
	Virt    string  `json:"virt,omitempty"` // "none", or the hypervisor or container found
	Load1   float64 `json:"load1_before"`   // 1-minute load average before the run
	Load1At float64 `json:"load1_after"`    // and after it
	// OtherCPUs is the CPU time other processes used during the run, in CPUs (1.0: one core busy for the
	// whole run); -1 when unknown.
	OtherCPUs float64 `json:"other_cpus"`
	// OthersRunnable is the number of other runnable processes (/proc/stat's procs_running less this
	// one), the smaller of the counts just before and just after the run: a load that a run too short
	// for OtherCPUs still shows. -1 when unknown.
	OthersRunnable int `json:"others_runnable"`
	// Busiest are the other processes whose CPU time grew most during the run (at most 3, each above 5 %).
	Busiest []Proc `json:"busiest,omitempty"`
	// MemAvailable and MemTotal are bytes; CPUPressure and MemPressure the "some avg10" stall percentages
	// (-1 when unknown).
	MemTotal     int64   `json:"mem_total"`
	MemAvailable int64   `json:"mem_available"`
	CPUPressure  float64 `json:"cpu_pressure"`
	MemPressure  float64 `json:"mem_pressure"`
	GPUs         []GPU   `json:"gpus,omitempty"`
}

// Proc is another process and the share of one CPU it used during the run.
type Proc struct {
	PID     int     `json:"pid"`
	Name    string  `json:"name"`
	Percent float64 `json:"cpu_percent"`
}

// GPU is one GPU as nvidia-smi describes it.
type GPU struct {
	Name        string   `json:"name"`
	Driver      string   `json:"driver"`
	SMClockMHz  int      `json:"sm_clock_mhz"`
	MemClockMHz int      `json:"mem_clock_mhz"`
	TempC       int      `json:"temp_c"`
	PowerW      float64  `json:"power_w"`
	Processes   []string `json:"processes,omitempty"` // compute processes at Start, "pid name"
}

// Probe measures one run. Root is the file-system root the proc and sys files are read under ("/").
type Probe struct {
	root   string
	self   int
	c      Conditions
	busy0  int64 // system CPU time in clock ticks, not idle, at Start
	total0 int64
	run0   int // procs_running at Start, -1 when unknown
	ticks0 map[int]procTicks
}

type procTicks struct {
	name  string
	ticks int64
}

// MinWindow is the shortest run over which other processes' CPU use is measured (OtherCPUs, Busiest):
// the kernel counts CPU time in ticks of 10 ms. Shorter runs rely on the load average and the CPU
// pressure, which are averages over the last 10 s and minute.
const MinWindow = 500 * time.Millisecond

// Start reads the machine before a run.
func Start() *Probe { return start("/", os.Getpid()) }

func start(root string, self int) *Probe {
	p := &Probe{root: root, self: self}
	p.c.CPUModel, p.c.Virt = p.cpuinfo()
	p.c.CPUs = p.onlineCPUs()
	p.c.Affinity = affinity()
	p.c.Governor = strings.TrimSpace(p.read("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"))
	p.c.Kernel = kernel()
	if v := p.virtFromFiles(); v != "" {
		p.c.Virt = v
	}
	p.c.Load1 = p.load1()
	p.busy0, p.total0, p.run0 = p.cpuTime()
	p.ticks0 = p.procs()
	return p
}

// Finish reads the machine after a run whose command used cmdCPUNS of user and system time over wallNS.
func (p *Probe) Finish(wallNS, cmdCPUNS int64) *Conditions {
	c := p.c
	c.Load1At = p.load1()
	c.OtherCPUs = -1
	busy1, total1, run1 := p.cpuTime()
	c.OthersRunnable = -1
	if p.run0 > 0 && run1 > 0 {
		c.OthersRunnable = min(p.run0, run1) - 1
	}
	hz := int64(100) // USER_HZ: 100 on every Linux architecture Go supports
	// The counters tick 100 times a second: over a shorter run their error exceeds what they measure.
	long := wallNS >= int64(MinWindow)
	if long && p.total0 > 0 && total1 > p.total0 {
		busyNS := (busy1 - p.busy0) * (int64(time.Second) / hz)
		other := float64(busyNS-cmdCPUNS) / float64(wallNS)
		c.OtherCPUs = min(max(0, roundTo(other, 2)), float64(max(c.CPUs, 1)))
	}
	if long {
		ticks1 := p.procs()
		var ps []Proc
		for pid, t1 := range ticks1 {
			t0, ok := p.ticks0[pid]
			if !ok || pid == p.self || t1.name != t0.name {
				continue
			}
			pct := float64((t1.ticks-t0.ticks)*(int64(time.Second)/hz)) / float64(wallNS) * 100
			if pct >= 5 {
				ps = append(ps, Proc{PID: pid, Name: t1.name, Percent: roundTo(pct, 0)})
			}
		}
		sort.Slice(ps, func(i, j int) bool {
			if ps[i].Percent != ps[j].Percent {
				return ps[i].Percent > ps[j].Percent
			}
			return ps[i].PID < ps[j].PID
		})
		if len(ps) > 3 {
			ps = ps[:3]
		}
		c.Busiest = ps
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(p.read("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")), 64); err == nil {
		c.MHz = roundTo(f/1000, 0)
	}
	c.MemTotal, c.MemAvailable = p.meminfo()
	c.CPUPressure, c.MemPressure = p.pressure("cpu"), p.pressure("memory")
	return &c
}

func roundTo(v float64, digits int) float64 {
	s := strconv.FormatFloat(v, 'f', digits, 64)
	r, _ := strconv.ParseFloat(s, 64)
	return r
}

func (p *Probe) path(rel string) string { return filepath.Join(p.root, rel) }

func (p *Probe) read(rel string) string {
	b, err := os.ReadFile(p.path(rel))
	if err != nil {
		return ""
	}
	return string(b)
}

// cpuinfo returns the first "model name" and, when the CPU flags carry "hypervisor", "vm".
func (p *Probe) cpuinfo() (model, virt string) {
	virt = "none"
	sc := bufio.NewScanner(strings.NewReader(p.read("proc/cpuinfo")))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case model == "" && (k == "model name" || k == "Model" || k == "cpu model"):
			model = v
		case k == "flags" && strings.Contains(" "+v+" ", " hypervisor "):
			virt = "vm"
		}
	}
	return model, virt
}

// virtFromFiles names a container or hypervisor from the files that say so ("" when none does).
func (p *Probe) virtFromFiles() string {
	switch {
	case fileExists(p.path(".dockerenv")):
		return "docker"
	case fileExists(p.path("run/.containerenv")):
		return "podman"
	}
	if v := strings.TrimSpace(p.read("sys/class/dmi/id/sys_vendor")); v != "" {
		for _, h := range []string{"QEMU", "KVM", "VMware", "Microsoft", "Xen", "Amazon EC2", "Google", "innotek", "Parallels"} {
			if strings.Contains(v, h) {
				return strings.ToLower(strings.Fields(h)[0])
			}
		}
	}
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// onlineCPUs counts the CPUs in /sys/devices/system/cpu/online ("0-3,6"), else runtime.NumCPU.
func (p *Probe) onlineCPUs() int {
	s := strings.TrimSpace(p.read("sys/devices/system/cpu/online"))
	if s == "" {
		return runtime.NumCPU()
	}
	n := 0
	for _, r := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(r, "-")
		lo, err1 := strconv.Atoi(a)
		hi := lo
		var err2 error
		if isRange {
			hi, err2 = strconv.Atoi(b)
		}
		if err1 != nil || err2 != nil || hi < lo {
			return runtime.NumCPU()
		}
		n += hi - lo + 1
	}
	return n
}

func affinity() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0
	}
	return set.Count()
}

func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

func (p *Probe) load1() float64 {
	f := strings.Fields(p.read("proc/loadavg"))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// cpuTime returns the system's busy and total CPU time in clock ticks from /proc/stat's "cpu" line
// (idle and iowait are not busy), and its procs_running (-1 when absent).
func (p *Probe) cpuTime() (busy, total int64, running int) {
	stat := p.read("proc/stat")
	running = -1
	if _, after, ok := strings.Cut(stat, "\nprocs_running "); ok {
		v, _, _ := strings.Cut(after, "\n")
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			running = n
		}
	}
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, running
	}
	for i, s := range f[1:] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, running
		}
		if i >= 8 { // guest and guest_nice are already counted in user and nice
			break
		}
		total += v
		if i != 3 && i != 4 {
			busy += v
		}
	}
	return busy, total, running
}

// procs reads every process's name and user+system CPU ticks.
func (p *Probe) procs() map[int]procTicks {
	ents, err := os.ReadDir(p.path("proc"))
	if err != nil {
		return nil
	}
	out := make(map[int]procTicks, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(p.path(filepath.Join("proc", e.Name(), "stat")))
		if err != nil {
			continue
		}
		if t, ok := parseStat(b); ok {
			out[pid] = t
		}
	}
	return out
}

// parseStat reads the name (comm, between the first "(" and the last ")") and utime+stime (fields 14
// and 15) of a /proc/PID/stat line.
func parseStat(b []byte) (procTicks, bool) {
	i, j := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if i < 0 || j < i {
		return procTicks{}, false
	}
	f := strings.Fields(string(b[j+1:]))
	// f[0] is field 3 (state): utime is field 14, f[11]; stime f[12].
	if len(f) < 13 {
		return procTicks{}, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return procTicks{}, false
	}
	return procTicks{name: string(b[i+1 : j]), ticks: u + s}, true
}

func (p *Probe) meminfo() (total, avail int64) {
	sc := bufio.NewScanner(strings.NewReader(p.read("proc/meminfo")))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "MemTotal":
			total = n * 1024
		case "MemAvailable":
			avail = n * 1024
		}
	}
	return total, avail
}

// pressure returns the "some avg10" of /proc/pressure/<what>, -1 when unknown.
func (p *Probe) pressure(what string) float64 {
	line, _, _ := strings.Cut(p.read("proc/pressure/"+what), "\n")
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, "avg10="); ok && strings.HasPrefix(line, "some ") {
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				return x
			}
		}
	}
	return -1
}

// GPUsAsync queries the GPUs in the background when nvidia-smi is on PATH (nvidia-smi takes about a
// tenth of a second: the caller starts it early, beside other work, and takes the answer before it
// times anything). The channel yields nil without nvidia-smi or when it fails.
func GPUsAsync() <-chan []GPU {
	ch := make(chan []GPU, 1)
	smi, err := exec.LookPath("nvidia-smi")
	if err != nil {
		ch <- nil
		return ch
	}
	go func() { ch <- QueryGPUs(smi) }()
	return ch
}

// QueryGPUs asks nvidia-smi for each GPU's state and the compute processes on the GPUs (2 s at most).
func QueryGPUs(smi string) []GPU {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := subproc.Query(exec.CommandContext(ctx, smi, "--query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw",
		"--format=csv,noheader,nounits")).Output()
	if err != nil {
		return nil
	}
	gpus := ParseGPUs(string(out))
	apps, err := subproc.Query(exec.CommandContext(ctx, smi, "--query-compute-apps=pid,process_name", "--format=csv,noheader")).Output()
	if err == nil && len(gpus) > 0 {
		for _, l := range strings.Split(strings.TrimSpace(string(apps)), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				pid, name, _ := strings.Cut(l, ",")
				gpus[0].Processes = append(gpus[0].Processes, strings.TrimSpace(pid)+" "+strings.TrimSpace(name))
			}
		}
	}
	return gpus
}

// ParseGPUs reads nvidia-smi's --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,
// power.draw --format=csv,noheader,nounits lines ("[N/A]" fields stay 0).
func ParseGPUs(out string) []GPU {
	var gpus []GPU
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(l, ",")
		if len(f) < 6 {
			continue
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		g := GPU{Name: f[0], Driver: f[1]}
		g.SMClockMHz, _ = strconv.Atoi(f[2])
		g.MemClockMHz, _ = strconv.Atoi(f[3])
		g.TempC, _ = strconv.Atoi(f[4])
		g.PowerW, _ = strconv.ParseFloat(f[5], 64)
		gpus = append(gpus, g)
	}
	return gpus
}

// Loaded says, in words, why a run's machine was busy ("" when it was quiet): other processes used
// at least a quarter of a CPU, the CPU pressure stalled tasks 10 % of the time, or (for a run too short
// to measure others' CPU use) the load average reached the number of CPUs or other processes were
// runnable just before and just after the run (two, or one per four CPUs the command may use: a kernel
// worker or a process finishing makes one for a moment).
func (c *Conditions) Loaded() string {
	if c == nil {
		return ""
	}
	var why []string
	if c.OtherCPUs >= 0.25 {
		s := fmt.Sprintf("other processes used %.2f CPUs", c.OtherCPUs)
		if len(c.Busiest) > 0 {
			var names []string
			for _, p := range c.Busiest {
				names = append(names, fmt.Sprintf("%s %.0f%%", p.Name, p.Percent))
			}
			s += " (" + strings.Join(names, ", ") + ")"
		}
		why = append(why, s)
	}
	if c.CPUPressure >= 10 {
		why = append(why, fmt.Sprintf("CPU pressure %.0f%%", c.CPUPressure))
	}
	if c.OtherCPUs < 0 && c.CPUs > 0 && c.Load1 >= float64(c.CPUs) {
		why = append(why, fmt.Sprintf("load average %.2f on %d CPUs", c.Load1, c.CPUs))
	}
	if c.OtherCPUs < 0 && c.OthersRunnable >= max(2, c.Affinity/4) {
		why = append(why, fmt.Sprintf("%d other runnable processes", c.OthersRunnable))
	}
	return strings.Join(why, ", ")
}

// Differences lists, in words, how the conditions of two runs differ in ways that move timings: another
// CPU, kernel, governor, CPU count or affinity, a frequency 10 % apart, other GPUs or GPU clocks, and
// either side loaded. Empty when they match or either is unknown.
func Differences(a, b *Conditions) []string {
	if a == nil || b == nil {
		return nil
	}
	var out []string
	diff := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s %s vs %s", what, orUnknown(x), orUnknown(y)))
		}
	}
	diff("CPU", a.CPUModel, b.CPUModel)
	diff("kernel", a.Kernel, b.Kernel)
	diff("governor", a.Governor, b.Governor)
	diff("virtualisation", a.Virt, b.Virt)
	if a.CPUs != b.CPUs || a.Affinity != b.Affinity {
		out = append(out, fmt.Sprintf("CPUs %d (may use %d) vs %d (may use %d)", a.CPUs, a.Affinity, b.CPUs, b.Affinity))
	}
	if a.MHz > 0 && b.MHz > 0 && (a.MHz > 1.1*b.MHz || b.MHz > 1.1*a.MHz) {
		out = append(out, fmt.Sprintf("CPU frequency %.0f vs %.0f MHz", a.MHz, b.MHz))
	}
	if la, lb := a.Loaded(), b.Loaded(); (la == "") != (lb == "") {
		// One side loaded, the other quiet (both loaded is no difference; diff says so apart).
		out = append(out, fmt.Sprintf("load: %s vs %s", orWord(la, "quiet"), orWord(lb, "quiet")))
	}
	if len(a.GPUs) != len(b.GPUs) {
		out = append(out, fmt.Sprintf("GPUs %d vs %d", len(a.GPUs), len(b.GPUs)))
	} else {
		for i := range a.GPUs {
			ga, gb := a.GPUs[i], b.GPUs[i]
			diff(fmt.Sprintf("GPU %d", i), ga.Name, gb.Name)
			diff(fmt.Sprintf("GPU %d driver", i), ga.Driver, gb.Driver)
			if ga.SMClockMHz > 0 && gb.SMClockMHz > 0 && (ga.SMClockMHz*10 > gb.SMClockMHz*11 || gb.SMClockMHz*10 > ga.SMClockMHz*11) {
				out = append(out, fmt.Sprintf("GPU %d SM clock %d vs %d MHz", i, ga.SMClockMHz, gb.SMClockMHz))
			}
			if len(ga.Processes) != len(gb.Processes) {
				out = append(out, fmt.Sprintf("GPU %d other compute processes %d vs %d", i, len(ga.Processes), len(gb.Processes)))
			}
		}
	}
	return out
}

func orUnknown(s string) string { return orWord(s, "unknown") }

func orWord(s, w string) string {
	if s == "" {
		return w
	}
	return s
}
