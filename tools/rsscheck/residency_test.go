package main

import (
	"debug/elf"
	"os"
	"runtime"
	"testing"
)

func TestPackageOf(t *testing.T) {
	for sym, want := range map[string]string{
		"net/http.(*Server).Serve":                          "net/http",
		"github.com/a/b.init.0":                             "github.com/a/b",
		"runtime.mallocgc":                                  "runtime",
		"main.main":                                         "main",
		"github.com/a/b.F[go.shape.string]":                 "github.com/a/b",
		"github.com/vcpnode/vcpnode/toolhost/plugin.(*H).X": "github.com/vcpnode/vcpnode/toolhost/plugin",
	} {
		if got := packageOf(sym); got != want {
			t.Errorf("packageOf(%q) = %q, want %q", sym, got, want)
		}
	}
}

func TestIsMappingLine(t *testing.T) {
	for line, want := range map[string]bool{
		"00400000-00a9e000 r-xp 00000000 fe:00 9994442   /tmp/vcpnode": true,
		"7f1dfb860000-7f1dfba00000 rw-p 00000000 00:00 0 ":             true,
		"Rss:                6264 kB":                                  false,
		"VmFlags: rd ex mr mw me":                                      false,
	} {
		if got := isMappingLine(line); got != want {
			t.Errorf("isMappingLine(%q) = %v, want %v", line, got, want)
		}
	}
}

// The tables named by the pclntab header follow each other and fill the
// section; this test binary's own pclntab is read.
func TestPclntabTables(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the test binary as ELF: Linux only")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".gopclntab")
	if s == nil {
		t.Fatal("no .gopclntab in the test binary")
	}
	tables, err := pclntabTables(s)
	if err != nil {
		t.Fatal(err)
	}
	next := tables[0].start
	if next <= s.Addr || next > s.Addr+4096 {
		t.Errorf("funcnametab starts at %#x, want just after the header at %#x", next, s.Addr)
	}
	for _, tb := range tables {
		if tb.start != next || tb.end <= tb.start {
			t.Errorf("%s spans %#x-%#x, want it to start at %#x and be non-empty", tb.name, tb.start, tb.end, next)
		}
		next = tb.end
	}
	if next != s.Addr+s.Size {
		t.Errorf("the tables end at %#x, the section at %#x", next, s.Addr+s.Size)
	}
}
