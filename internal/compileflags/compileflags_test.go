package compileflags

import (
	"reflect"
	"testing"
)

func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want []Compile
	}{
		{"cc -O2 -g -c main.c -o main.o", []Compile{{Object: "main.o", Level: "-O2"}}},
		{"gcc -g -c main.c -o main.o", []Compile{{Object: "main.o", Level: "-O0"}}},
		{"cc -O2 -c a.c -o a.o", []Compile{{Object: "a.o", Level: "-O2"}}},
		{"x86_64-linux-gnu-gcc-12 -O -ggdb -c a.c -o a.o", []Compile{{Object: "a.o", Level: "-O1"}}},
		{"ccache g++ -O2 -O3 -g -c a.cc -o a.o", []Compile{{Object: "a.o", Level: "-O3"}}},
		{"CCACHE_DIR=/tmp/c ccache cc -Os -g -c a.c -o a.o", []Compile{{Object: "a.o", Level: "-Os"}}},
		{"cd /b/sub && /usr/bin/cc -DX -O2 -g -MD -MT x -MF x.d -o CMakeFiles/k.dir/k.c.o -c /s/k.c",
			[]Compile{{Object: "CMakeFiles/k.dir/k.c.o", Dir: "/b/sub", Level: "-O2"}}},
		{"echo compiling\ncc -O2 -g -c a.c -o a.o", []Compile{{Object: "a.o", Level: "-O2"}}},
		{"cc -O2 -c src/main.c", []Compile{{Object: "main.o", Level: "-O2"}}}, // no -o: the source's name, here
		// Quoted words are one word: the options inside them are a macro's value.
		{`cc -g -O2 -DBUILD_FLAGS="\"-g -O3\"" -c main.c -o main.o`, []Compile{{Object: "main.o", Level: "-O2"}}},
		{`cc '-DOPTS="-g -O3"' -c a.c -o a.o`, []Compile{{Object: "a.o", Level: "-O0"}}},
		{`cc -Wa,-O2 -c a.c -o a.o`, []Compile{{Object: "a.o", Level: "-O0"}}},
		{"cc -O2 -g -c a.c -o a.o && cc -O1 -g -c b.c -o b.o", []Compile{{Object: "a.o", Level: "-O2"}, {Object: "b.o", Level: "-O1"}}},
		// Not told: no -c, not GCC's driver, a response file, two sources.
		{"cc -O2 -g -o app a.o", nil},
		{"nvcc -O3 -g -c k.cu -o k.o", nil},
		{"clang-14 -O2 -g -c a.c -o a.o", nil},
		{"cc -g -c a.c -o a.o @flags.rsp", nil},
		{"cc -O2 -c a.c b.c", nil},
	} {
		if got := ParseCommand(c.cmd); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseCommand(%q) = %+v; want %+v", c.cmd, got, c.want)
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
