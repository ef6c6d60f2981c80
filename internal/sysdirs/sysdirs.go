// Package sysdirs says which absolute paths belong to the operating system rather than to the user's
// build, by prefix, without touching the disk.
//
// Two questions, two answers. Volatile: kernel file systems whose look-ups change on every call and
// are never build inputs (/proc, /sys, the device nodes of /dev); /dev/shm is not among them: it is a
// plain in-memory file system where users put workspaces and scratch build folders. System: the
// folders the system installs and runs from (/usr, /etc, /lib*, /bin, /sbin, /run, /var, and the
// volatile ones): a traced build's reads there are not the user's inputs. A path inside one of the
// folders the caller owns (the workspace, the target and build folders) is the user's whatever its
// prefix: a Jenkins workspace lives under /var/lib/jenkins, a CI job may build in /dev/shm or
// /run/user/UID, and a rule that skipped those would stay silent on every stale build there.
package sysdirs

import "strings"

// volatileDirs are kernel file systems; userAreas are the folders inside them that hold plain files.
var (
	volatileDirs = []string{"/proc", "/sys", "/dev"}
	userAreas    = []string{"/dev/shm"}
	systemDirs   = []string{"/usr", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/run", "/var"}
)

// under reports whether abs is dir or inside it.
func under(abs, dir string) bool {
	return abs == dir || strings.HasPrefix(abs, dir) && len(abs) > len(dir) && (abs[len(dir)] == '/' || dir == "/")
}

// Volatile reports whether abs is on a kernel file system (/proc, /sys, /dev outside /dev/shm).
func Volatile(abs string) bool {
	for _, u := range userAreas {
		if under(abs, u) {
			return false
		}
	}
	for _, d := range volatileDirs {
		if under(abs, d) {
			return true
		}
	}
	return false
}

// System reports whether abs is in a system folder (or Volatile), and not inside any of own: the
// folders of the build being judged.
func System(abs string, own ...string) bool {
	for _, o := range own {
		if o != "" && under(abs, strings.TrimSuffix(o, "/")) {
			return false
		}
	}
	if Volatile(abs) {
		return true
	}
	for _, d := range systemDirs {
		if under(abs, d) {
			return true
		}
	}
	return false
}
