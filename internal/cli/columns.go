package cli

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// columns lays out a table as text/tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) does for rows of the same
// number of cells: every cell but the last of its row padded with spaces to its column's widest cell
// (in runes) plus 2. It keeps the cells rather than the text, so 10,000 rows cost one allocation
// per cell and no reflowing (runs over 10,000 records spent a third of its time in fmt and tabwriter).
type columns struct {
	w     io.Writer
	n     int
	cells []string
	width []int
}

// newColumns starts a table of n cells a row, with room for rows rows.
func newColumns(w io.Writer, n, rows int) *columns {
	return &columns{w: w, n: n, width: make([]int, n), cells: make([]string, 0, n*rows)}
}

// row adds one row of exactly n cells.
func (c *columns) row(cells ...string) {
	for i, s := range cells[:c.n-1] {
		if k := utf8.RuneCountInString(s); k > c.width[i] {
			c.width[i] = k
		}
	}
	c.cells = append(c.cells, cells...)
}

// flush writes the rows.
func (c *columns) flush() error {
	var b []byte
	pad := strings.Repeat(" ", 2+max(0, maxInt(c.width)))
	for r := 0; r < len(c.cells); r += c.n {
		for i, s := range c.cells[r : r+c.n] {
			b = append(b, s...)
			if i < c.n-1 {
				b = append(b, pad[:c.width[i]+2-utf8.RuneCountInString(s)]...)
			}
		}
		b = append(b, '\n')
		if len(b) >= 32<<10 {
			if _, err := c.w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	_, err := c.w.Write(b)
	return err
}

func maxInt(v []int) int {
	m := 0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// seconds formats nanoseconds as seconds with three decimals: "1.010 s".
func seconds(ns int64) string { return strconv.FormatFloat(float64(ns)/1e9, 'f', 3, 64) + " s" }
