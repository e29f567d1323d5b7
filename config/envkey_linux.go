package config

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// wipeInitialEnv overwrites the value of name in the environment block the
// process started with, which /proc/<pid>/environ shows. The block's bounds
// are env_start and env_end of /proc/self/stat (Linux 3.5+); the process may
// always write its own memory through /proc/self/mem.
func wipeInitialEnv(name string) error {
	start, end, err := envBounds()
	if err != nil {
		return fmt.Errorf("remove $%s from the initial environment: %w", name, err)
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("remove $%s from the initial environment: %w", name, err)
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, start); err != nil {
		return fmt.Errorf("remove $%s from the initial environment: read: %w", name, err)
	}
	prefix := []byte(name + "=")
	off := 0
	for _, entry := range bytes.Split(block, []byte{0}) {
		if bytes.HasPrefix(entry, prefix) && len(entry) > len(prefix) {
			stars := bytes.Repeat([]byte{'*'}, len(entry)-len(prefix))
			if _, err := mem.WriteAt(stars, start+int64(off+len(prefix))); err != nil {
				return fmt.Errorf("remove $%s from the initial environment: write: %w", name, err)
			}
		}
		off += len(entry) + 1
	}
	return nil
}

// envBounds reads env_start and env_end (fields 50 and 51) of /proc/self/stat.
func envBounds() (start, end int64, err error) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, err
	}
	// Field 2, the command name, is in parentheses and may hold anything.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/self/stat: no command name")
	}
	fields := strings.Fields(string(stat[i+1:])) // fields[0] is field 3
	if len(fields) < 49 {
		return 0, 0, fmt.Errorf("/proc/self/stat has %d fields; env_start needs Linux 3.5 or later", len(fields)+2)
	}
	start, err1 := strconv.ParseInt(fields[47], 10, 64)
	end, err2 := strconv.ParseInt(fields[48], 10, 64)
	if err1 != nil || err2 != nil || start <= 0 || end <= start {
		return 0, 0, fmt.Errorf("/proc/self/stat: bad env_start/env_end %q %q", fields[47], fields[48])
	}
	return start, end, nil
}
