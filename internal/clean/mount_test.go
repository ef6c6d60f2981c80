package clean

import (
	"fmt"
	"testing"
)

// The mount table's mount points at or below a folder, with the kernel's octal escapes undone.
func TestMountsUnderIn(t *testing.T) {
	table := `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
36 22 0:32 / /tmp/ws/target rw shared:2 - tmpfs tmpfs rw
37 36 8:1 /home/me/decoy /tmp/ws/target/release/build/x-1/out/mnt rw - ext4 /dev/sda1 rw
38 22 8:1 /data /tmp/ws/target2 rw - ext4 /dev/sda1 rw
39 36 0:40 / /tmp/ws/target/release/build/with\040space rw - tmpfs tmpfs rw
`
	for dir, want := range map[string]string{
		"/tmp/ws/target/release/build/x-1":         "[/tmp/ws/target/release/build/x-1/out/mnt]",
		"/tmp/ws/target/release/build/with space":  "[/tmp/ws/target/release/build/with space]",
		"/tmp/ws/target/release/build/y-2":         "[]",
		"/tmp/ws/targ":                             "[]",
		"/tmp/ws/target/release/build/x-1/out/mnt": "[/tmp/ws/target/release/build/x-1/out/mnt]",
	} {
		if got := fmt.Sprint(mountsUnderIn(table, dir)); got != want {
			t.Errorf("mountsUnderIn(%s) = %s, want %s", dir, got, want)
		}
	}
	if got := unescapeMount(`a\134b\011c\12`); got != "a\\b\tc\\12" {
		t.Errorf("unescapeMount = %q", got)
	}
}
