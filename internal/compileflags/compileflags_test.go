package compileflags

import "testing"

func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want Compile
		ok   bool
	}{
		{"cc -O2 -g -c main.c -o main.o", Compile{Object: "main.o", Level: "-O2"}, true},
		{"gcc -g -c main.c -o main.o", Compile{Object: "main.o", Level: "-O0"}, true},
		{"x86_64-linux-gnu-gcc-12 -O -ggdb -c a.c -o a.o", Compile{Object: "a.o", Level: "-O1"}, true},
		{"ccache g++ -O2 -O3 -g -c a.cc -o a.o", Compile{Object: "a.o", Level: "-O3"}, true},
		{"CCACHE_DIR=/tmp/c ccache cc -Os -g -c a.c -o a.o", Compile{Object: "a.o", Level: "-Os"}, true},
		{"cd /b/sub && /usr/bin/cc -DX -O2 -g -MD -MT x -MF x.d -o CMakeFiles/k.dir/k.c.o -c /s/k.c",
			Compile{Object: "CMakeFiles/k.dir/k.c.o", Dir: "/b/sub", Level: "-O2"}, true},
		{"echo compiling\ncc -O2 -g -c a.c -o a.o", Compile{Object: "a.o", Level: "-O2"}, true},
		// Not told: no debug information, no -c, not GCC's driver, a response file, two compiles.
		{"cc -O2 -c a.c -o a.o", Compile{}, false},
		{"cc -O2 -g -g0 -c a.c -o a.o", Compile{}, false},
		{"cc -O2 -g -gno-record-gcc-switches -c a.c -o a.o", Compile{}, false},
		{"cc -O2 -g -o app a.o", Compile{}, false},
		{"nvcc -O3 -g -c k.cu -o k.o", Compile{}, false},
		{"clang-14 -O2 -g -c a.c -o a.o", Compile{}, false},
		{"cc -g -c a.c -o a.o @flags.rsp", Compile{}, false},
		{"cc -O2 -g -c a.c -o a.o && cc -O1 -g -c b.c -o b.o", Compile{}, false},
	} {
		got, ok := ParseCommand(c.cmd)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("ParseCommand(%q) = %+v, %v; want %+v, %v", c.cmd, got, ok, c.want, c.ok)
		}
	}
}

func TestProducerLevel(t *testing.T) {
	for _, c := range []struct {
		producer, want string
		ok             bool
	}{
		{"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O0 -fasynchronous-unwind-tables", "-O0", true},
		{"GNU C++17 12.2.0 -mtune=generic -march=x86-64 -g -O2", "-O2", true},
		{"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g", "-O0", true},
		{"GNU C11 4.8.5 -O", "-O1", true},
		{"GNU C17 12.2.0", "", false}, // no options recorded
		{"Debian clang version 14.0.6", "", false},
		{"", "", false},
	} {
		got, ok := ProducerLevel(c.producer)
		if ok != c.ok || got != c.want {
			t.Errorf("ProducerLevel(%q) = %q, %v; want %q, %v", c.producer, got, ok, c.want, c.ok)
		}
	}
}
