package sysdirs

import "testing"

func TestVolatileAndSystem(t *testing.T) {
	for _, c := range []struct {
		path             string
		own              []string
		volatile, system bool
	}{
		{"/proc/self/stat", nil, true, true},
		{"/dev/null", nil, true, true},
		{"/dev", nil, true, true},
		{"/device/x", nil, false, false},
		{"/dev/shm/ws/src/lib.c", nil, false, false},
		{"/dev/shm", nil, false, false},
		{"/usr/include/stdio.h", nil, false, true},
		{"/usrlocal/x.h", nil, false, false},
		{"/var/lib/jenkins/workspace/app/src/a.c", nil, false, true},
		{"/var/lib/jenkins/workspace/app/src/a.c", []string{"/var/lib/jenkins/workspace/app"}, false, false},
		{"/var/lib/jenkins/workspace/app2/a.c", []string{"/var/lib/jenkins/workspace/app"}, false, true},
		{"/run/user/1000/ws/a.c", []string{"/run/user/1000/ws/"}, false, false},
		{"/home/u/ws/a.c", nil, false, false},
	} {
		if got := Volatile(c.path); got != c.volatile {
			t.Errorf("Volatile(%q) = %v, want %v", c.path, got, c.volatile)
		}
		if got := System(c.path, c.own...); got != c.system {
			t.Errorf("System(%q, %q) = %v, want %v", c.path, c.own, got, c.system)
		}
	}
}
