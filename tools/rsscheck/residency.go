package main

import (
	"bufio"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
)

// residency says which parts of a running binary's file are resident: per
// ELF section, and for .text per package (when the binary has a symbol
// table, i.e. it was not linked with -s). It reads /proc/PID/pagemap, which
// needs root to show the present bit of file pages.
func residency(pid int, bin string) (string, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return "", fmt.Errorf("read the binary's sections: %w", err)
	}
	defer f.Close()
	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return "", fmt.Errorf("open pagemap (Linux only): %w", err)
	}
	defer pm.Close()
	const page = 4096
	present := func(addr uint64) (bool, error) {
		var b [8]byte
		if _, err := pm.ReadAt(b[:], int64(addr/page*8)); err != nil {
			return false, fmt.Errorf("read pagemap: %w", err)
		}
		return binary.LittleEndian.Uint64(b[:])&(1<<63) != 0, nil
	}
	// pages counts the pages of [start, end) and those of them resident.
	pages := func(start, end uint64) (all, res uint64, err error) {
		for a := start &^ (page - 1); a < end; a += page {
			p, err := present(a)
			if err != nil {
				return 0, 0, err
			}
			all++
			if p {
				res++
			}
		}
		return all, res, nil
	}

	var out strings.Builder
	fmt.Fprintf(&out, "  %-14s %9s %9s %6s\n", "section", "KiB", "resident", "share")
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || s.Size < page {
			continue
		}
		all, res, err := pages(s.Addr, s.Addr+s.Size)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&out, "  %-14s %9d %9d %5.0f%%\n", s.Name, all*4, res*4, 100*float64(res)/float64(all))
	}
	if pcln := f.Section(".gopclntab"); pcln != nil {
		tables, err := pclntabTables(pcln)
		if err != nil {
			return "", err
		}
		for _, t := range tables {
			all, res, err := pages(t.start, t.end)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&out, "    %-12s %9d %9d %5.0f%%\n", t.name, all*4, res*4, 100*float64(res)/float64(max(all, 1)))
		}
	}

	syms, err := f.Symbols()
	if err != nil {
		fmt.Fprintf(&out, "  (no symbol table: build without -s for the share per package)\n")
		return out.String(), nil
	}
	text := f.Section(".text")
	type span struct {
		pkg        string
		start, end uint64
	}
	var funcs []span
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value < text.Addr || s.Value >= text.Addr+text.Size {
			continue
		}
		funcs = append(funcs, span{pkg: packageOf(s.Name), start: s.Value, end: s.Value + s.Size})
	}
	slices.SortFunc(funcs, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	type usage struct{ all, res uint64 }
	byPkg := map[string]*usage{}
	for _, fn := range funcs {
		u := byPkg[fn.pkg]
		if u == nil {
			u = &usage{}
			byPkg[fn.pkg] = u
		}
		// Bytes of the function on resident pages.
		for a := fn.start; a < fn.end; {
			next := min((a&^(page-1))+page, fn.end)
			p, err := present(a)
			if err != nil {
				return "", err
			}
			u.all += next - a
			if p {
				u.res += next - a
			}
			a = next
		}
	}
	pkgs := make([]string, 0, len(byPkg))
	for p := range byPkg {
		pkgs = append(pkgs, p)
	}
	slices.SortFunc(pkgs, func(a, b string) int { return cmp.Compare(byPkg[b].res, byPkg[a].res) })
	fmt.Fprintf(&out, "  .text by package (largest resident first): KiB resident / KiB linked\n")
	for _, p := range pkgs[:min(len(pkgs), 40)] {
		fmt.Fprintf(&out, "    %7.1f / %7.1f  %s\n", float64(byPkg[p].res)/1024, float64(byPkg[p].all)/1024, p)
	}
	return out.String(), nil
}

// packageOf returns the import path of a Go symbol name such as
// "net/http.(*Server).Serve" or "github.com/a/b.init.0".
func packageOf(sym string) string {
	slash := strings.LastIndex(sym, "/")
	if dot := strings.Index(sym[slash+1:], "."); dot >= 0 {
		return sym[:slash+1+dot]
	}
	return sym
}

// mappings lists the process's mappings with at least 64 KiB resident:
// where the anonymous memory is (heap arenas, stacks, .data/.bss).
func mappings(pid int) (string, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return "", fmt.Errorf("read smaps (Linux only): %w", err)
	}
	defer f.Close()
	var out strings.Builder
	var head string
	var rss, anon int64
	flush := func() {
		if head != "" && rss >= 64 {
			fmt.Fprintf(&out, "    Rss %6d KiB, Anonymous %6d KiB  %s\n", rss, anon, head)
		}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		name, rest, _ := strings.Cut(line, ":")
		switch {
		case isMappingLine(line):
			flush()
			head, rss, anon = line, 0, 0
		case name == "Rss":
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &rss)
		case name == "Anonymous":
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &anon)
		}
	}
	flush()
	return out.String(), sc.Err()
}

// isMappingLine tells a mapping's first line in smaps ("7f..-7f.. r-xp 0000
// 00:1f 123 /path") from its "Name: value" lines.
func isMappingLine(line string) bool {
	f := strings.Fields(line)
	return len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":")
}

type addrRange struct {
	name       string
	start, end uint64
}

// pclntabTables splits .gopclntab into the tables its header names (the
// runtime's pcHeader: magic, pads, nfunc, nfiles, an unused word, then the
// offsets of funcnametab, cutab, filetab, pctab and the function table).
func pclntabTables(s *elf.Section) ([]addrRange, error) {
	var h [72]byte
	if _, err := s.ReadAt(h[:], 0); err != nil {
		return nil, fmt.Errorf("read the pclntab header: %w", err)
	}
	names := []string{"funcnametab", "cutab", "filetab", "pctab", "functab"}
	var tables []addrRange
	for i, name := range names {
		start := binary.LittleEndian.Uint64(h[32+8*i:])
		end := s.Size
		if i+1 < len(names) {
			end = binary.LittleEndian.Uint64(h[32+8*(i+1):])
		}
		tables = append(tables, addrRange{name: name, start: s.Addr + start, end: s.Addr + end})
	}
	return tables, nil
}
