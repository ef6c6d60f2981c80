package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// MaxLine is the longest strace output line the parser accepts, in bytes (an execve line carries the
// whole environment, each string up to -s 4096 bytes; 16 MiB is far above anything a build prints).
const MaxLine = 16 << 20

// Call is one system call as strace printed it, with an `<unfinished ...>` line and its
// `<... NAME resumed>` line joined (per pid) into one.
type Call struct {
	PID  int
	Time int64  // wall clock, nanoseconds since the epoch (strace --timestamps=unix,ns)
	Name string // the system call, e.g. "openat"
	// Args are the top-level arguments as strace printed them (strings still quoted and escaped: see
	// Unquote). They alias the parser's buffer: valid until the next call to Next.
	Args [][]byte
	// Ret is the return value as printed ("0", "3", "?", "0x7f..."); Errno the error name when the
	// call failed ("ENOENT"), else "".
	Ret   []byte
	Errno string
	// Exit is set for strace's `+++ exited with N +++` (Exited, Code) and `+++ killed by SIGX +++`
	// (Signal) lines; Name is then "".
	Exit *ExitLine
}

// ExitLine is a process's (or thread's) end as strace reports it.
type ExitLine struct {
	Code   int    // the exit status (exited)
	Signal string // the signal name (killed), e.g. "SIGKILL"
	Core   bool   // "(core dumped)"
}

// Parser reads strace output (`strace -f --timestamps=unix,ns -o FILE`, strace 6.1) line by line from a
// stream, never holding more than one line and the unfinished calls of the live pids.
type Parser struct {
	r       *bufio.Reader
	line    int64
	pending map[int][]byte // pid → text before " <unfinished ...>"
	names   map[string]string
	buf     []byte // the joined line of the current call
	args    [][]byte
	// Skipped counts lines the parser did not understand (kept going); FirstSkip is the first of them.
	Skipped   int64
	FirstSkip string
}

// NewParser returns a parser reading r.
func NewParser(r io.Reader) *Parser {
	return &Parser{r: bufio.NewReaderSize(r, 1<<20), pending: map[int][]byte{}, names: map[string]string{}}
}

// Line is the number of lines read so far.
func (p *Parser) Line() int64 { return p.line }

// Next returns the next complete call or exit line; io.EOF at the end of the stream. Lines it cannot
// parse are counted in Skipped and passed over; a line longer than MaxLine is an error.
func (p *Parser) Next() (*Call, error) {
	for {
		raw, err := p.readLine()
		if err != nil {
			return nil, err
		}
		c, ok := p.parse(raw)
		if ok {
			return c, nil
		}
	}
}

func (p *Parser) readLine() ([]byte, error) {
	var long []byte
	for {
		frag, err := p.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, frag...)
			if len(long) > MaxLine {
				return nil, fmt.Errorf("strace output line %d is longer than %d bytes", p.line+1, MaxLine)
			}
			continue
		}
		if err == io.EOF && len(frag) == 0 && len(long) == 0 {
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		p.line++
		if long != nil {
			frag = append(long, frag...)
		}
		return bytes.TrimRight(frag, "\n"), nil
	}
}

func (p *Parser) skip(raw []byte) {
	if p.Skipped == 0 {
		s := raw
		if len(s) > 200 {
			s = s[:200]
		}
		p.FirstSkip = fmt.Sprintf("line %d: %q", p.line, s)
	}
	p.Skipped++
}

var (
	unfinished = []byte(" <unfinished ...>")
	resumedPre = []byte("<... ")
	resumedMid = []byte(" resumed>")
)

func (p *Parser) parse(raw []byte) (*Call, bool) {
	// PID SECONDS.NANOS REST
	sp := bytes.IndexByte(raw, ' ')
	if sp <= 0 {
		p.skip(raw)
		return nil, false
	}
	pid, err := strconv.Atoi(string(raw[:sp]))
	if err != nil {
		p.skip(raw)
		return nil, false
	}
	// strace pads the pid to five columns ("2343  1796159441.4…"): skip every space.
	rest := bytes.TrimLeft(raw[sp+1:], " ")
	sp = bytes.IndexByte(rest, ' ')
	if sp <= 0 {
		p.skip(raw)
		return nil, false
	}
	ts, ok := parseTime(rest[:sp])
	if !ok {
		p.skip(raw)
		return nil, false
	}
	rest = rest[sp+1:]
	c := &Call{PID: pid, Time: ts}
	switch {
	case bytes.HasPrefix(rest, []byte("+++ ")):
		e, ok := parseExit(rest)
		if !ok {
			return nil, false // "+++ superseded by execve in pid N +++" and the like: nothing to record
		}
		c.Exit = e
		delete(p.pending, pid)
		return c, true
	case bytes.HasPrefix(rest, []byte("--- ")):
		return nil, false // signal delivery (-e signal=none hides these)
	case bytes.HasSuffix(rest, unfinished):
		p.pending[pid] = append(p.pending[pid][:0], rest[:len(rest)-len(unfinished)]...)
		return nil, false
	case bytes.HasPrefix(rest, resumedPre):
		i := bytes.Index(rest, resumedMid)
		pre, ok := p.pending[pid]
		if i < 0 || !ok {
			p.skip(raw)
			return nil, false
		}
		delete(p.pending, pid)
		p.buf = append(append(p.buf[:0], pre...), rest[i+len(resumedMid):]...)
		rest = p.buf
	}
	if !p.call(c, rest) {
		p.skip(raw)
		return nil, false
	}
	return c, true
}

// parseTime reads "1796157027.244303410" (seconds.nanoseconds; fewer fraction digits are scaled).
func parseTime(b []byte) (int64, bool) {
	dot := bytes.IndexByte(b, '.')
	if dot <= 0 {
		return 0, false
	}
	var sec, frac int64
	for _, ch := range b[:dot] {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		sec = sec*10 + int64(ch-'0')
	}
	digits := 0
	for _, ch := range b[dot+1:] {
		if ch < '0' || ch > '9' || digits == 9 {
			return 0, false
		}
		frac = frac*10 + int64(ch-'0')
		digits++
	}
	for ; digits < 9; digits++ {
		frac *= 10
	}
	return sec*1e9 + frac, true
}

func parseExit(rest []byte) (*ExitLine, bool) {
	if v, ok := bytes.CutPrefix(rest, []byte("+++ exited with ")); ok {
		n, _, _ := bytes.Cut(v, []byte(" "))
		code, err := strconv.Atoi(string(n))
		if err != nil {
			return nil, false
		}
		return &ExitLine{Code: code}, true
	}
	if v, ok := bytes.CutPrefix(rest, []byte("+++ killed by ")); ok {
		n, tail, _ := bytes.Cut(v, []byte(" "))
		return &ExitLine{Signal: string(n), Core: bytes.Contains(tail, []byte("core dumped"))}, true
	}
	return nil, false
}

// call splits `name(arg, arg, ...) = RET [ERRNO (text)]`.
func (p *Parser) call(c *Call, s []byte) bool {
	open := bytes.IndexByte(s, '(')
	if open <= 0 {
		return false
	}
	c.Name = p.internName(s[:open])
	p.args = p.args[:0]
	i := open + 1
	start := i
	depth := 0
	for i < len(s) {
		switch s[i] {
		case '"':
			j, ok := skipString(s, i)
			if !ok {
				return false
			}
			i = j
			continue
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case '(':
			depth++
		case ')':
			if depth == 0 {
				if a := bytes.TrimSpace(s[start:i]); len(a) > 0 || len(p.args) > 0 {
					p.args = append(p.args, a)
				}
				c.Args = p.args
				return p.parseRet(c, s[i+1:])
			}
			depth--
		case ',':
			if depth == 0 {
				p.args = append(p.args, bytes.TrimSpace(s[start:i]))
				start = i + 1
			}
		case '/':
			// strace comments: /* 35 vars */ (may hold brackets or commas).
			if i+1 < len(s) && s[i+1] == '*' {
				if e := bytes.Index(s[i+2:], []byte("*/")); e >= 0 {
					i += e + 4
					continue
				}
			}
		}
		i++
	}
	return false
}

// skipString returns the index after the closing quote of the string opening at s[i] (and after a
// "..." truncation mark).
func skipString(s []byte, i int) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			j++
			if bytes.HasPrefix(s[j:], []byte("...")) {
				j += 3
			}
			return j, true
		}
	}
	return 0, false
}

func (p *Parser) parseRet(c *Call, s []byte) bool {
	s, ok := bytes.CutPrefix(s, []byte(" = "))
	if !ok {
		return false
	}
	ret, tail, _ := bytes.Cut(s, []byte(" "))
	c.Ret = ret
	if len(tail) > 0 && tail[0] == 'E' {
		name, _, _ := bytes.Cut(tail, []byte(" "))
		c.Errno = p.internName(name)
	}
	return true
}

// internName keeps one copy of each system-call and errno name (there are a few hundred).
func (p *Parser) internName(b []byte) string {
	if s, ok := p.names[string(b)]; ok {
		return s
	}
	if len(p.names) > 4096 {
		return string(b)
	}
	s := string(b)
	p.names[s] = s
	return s
}

// ErrNotString is returned by Unquote for an argument that is not a quoted string (a NULL or an address).
var ErrNotString = errors.New("not a quoted string")

// Unquote decodes a string argument as strace prints it: "…" with C escapes (\n \t \r \v \f \\ \"),
// \xNN (--strings-in-hex, -x, -xx) and \NNN octal, and a trailing ... when strace cut it at -s bytes
// (truncated is then true).
func Unquote(b []byte) (s string, truncated bool, err error) {
	if len(b) < 2 || b[0] != '"' {
		return "", false, ErrNotString
	}
	if bytes.HasSuffix(b, []byte(`"...`)) {
		truncated = true
		b = b[:len(b)-3]
	}
	if b[len(b)-1] != '"' {
		return "", false, ErrNotString
	}
	body := b[1 : len(b)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), truncated, nil
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		ch := body[i]
		if ch != '\\' {
			out = append(out, ch)
			continue
		}
		i++
		if i >= len(body) {
			return "", false, fmt.Errorf("string ends in a lone backslash: %q", b)
		}
		switch e := body[i]; e {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'v':
			out = append(out, '\v')
		case 'f':
			out = append(out, '\f')
		case 'x':
			if i+2 >= len(body) {
				return "", false, fmt.Errorf("short \\x escape in %q", b)
			}
			v, err := strconv.ParseUint(string(body[i+1:i+3]), 16, 8)
			if err != nil {
				return "", false, fmt.Errorf("bad \\x escape in %q", b)
			}
			out = append(out, byte(v))
			i += 2
		default:
			if e >= '0' && e <= '7' {
				v, n := 0, 0
				for n < 3 && i+n < len(body) && body[i+n] >= '0' && body[i+n] <= '7' {
					v = v*8 + int(body[i+n]-'0')
					n++
				}
				out = append(out, byte(v))
				i += n - 1
				continue
			}
			out = append(out, e) // \\ \" and any other escaped character stand for themselves
		}
	}
	return string(out), truncated, nil
}

// Array splits a printed array argument `["a", "b"]` (argv, envp) into its elements; a trailing
// `...` (strace cut the array) is dropped and reported as truncated.
func Array(b []byte) (elems [][]byte, truncated bool, ok bool) {
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, false, false
	}
	body := b[1 : len(b)-1]
	for i := 0; i < len(body); {
		for i < len(body) && (body[i] == ' ' || body[i] == ',') {
			i++
		}
		if i >= len(body) {
			break
		}
		if body[i] == '"' {
			j, ok := skipString(body, i)
			if !ok {
				return nil, false, false
			}
			elems = append(elems, body[i:j])
			i = j
			continue
		}
		if bytes.HasPrefix(body[i:], []byte("...")) {
			truncated = true
			break
		}
		// Something else (an address strace could not read): keep it raw up to the next comma.
		j := bytes.IndexByte(body[i:], ',')
		if j < 0 {
			j = len(body) - i
		}
		elems = append(elems, body[i:i+j])
		i += j
	}
	return elems, truncated, true
}
