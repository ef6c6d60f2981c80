package content

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkBaselineStoreAfterRebuild is what a check that missed the verdict cache does with a content
// baseline store shared by many workspaces (5,000 runs of about 1.2 KB, a day's use on one machine):
// open it, ask for this workspace's 400 runs, record one new run, save. The floor it is judged against
// is reading and writing the file's bytes; decoding and encoding all of it as JSON cost 200 ms.
func BenchmarkBaselineStoreAfterRebuild(b *testing.B) {
	dir := b.TempDir()
	st := OpenStore(dir)
	inputs := map[string]string{}
	for i := 0; i < 12; i++ {
		inputs[fmt.Sprintf("crates/c%d/src/file%d.rs", i, i)] = "blake3:" + strings.Repeat("ab", 32)
	}
	for i := 0; i < 5000; i++ {
		st.c.Put(fmt.Sprintf("release/p%d-0123456789abcdef/lib-p%d@%d", i, i, 1796600000000000000+i), stepBaseline{RecordedNS: int64(i), Inputs: inputs, Hash: "0123456789abcdef"})
	}
	st.Save()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		st := OpenStore(dir)
		for i := 0; i < 400; i++ {
			if _, ok := st.c.Get(fmt.Sprintf("release/p%d-0123456789abcdef/lib-p%d@%d", i, i, 1796600000000000000+i)); !ok {
				b.Fatal("a run is missing")
			}
		}
		st.c.Put(fmt.Sprintf("release/new-0123456789abcdef/bin-new@%d", n), stepBaseline{RecordedNS: 1, Inputs: inputs})
		st.Save()
	}
}
