package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

const (
	// maxReadOutput bounds ReadFile's answer; a longer read is cut at a line
	// boundary with a note saying where to go on.
	maxReadOutput = 256 << 10
	// maxReadScan bounds the bytes read to reach a line range.
	maxReadScan = 64 << 20
	// maxLineBytes cuts absurd lines (minified code) in the answer.
	maxLineBytes = 16 << 10
	// sniffBytes is how much of a file is looked at for a NUL byte, as git
	// does to tell binary from text.
	sniffBytes = 8000
	// maxLineNumber bounds startLine and endLine arguments.
	maxLineNumber = 1 << 30
)

type readTool struct{ access *files.Access }

func (t *readTool) Spec() toolhost.Spec {
	return spec(ReadFileName, "Read file",
		"Returns a text file of this node, or a range of its lines. Binary files are refused.",
		[]schema.Param{
			{Name: "path", Type: schema.TypeString, Required: true, Description: "File to read: an absolute path or file:// URL, or a path relative to this node's file roots."},
			{Name: "startLine", Type: schema.TypeInteger, Description: "First line to return, counting from 1; default 1."},
			{Name: "endLine", Type: schema.TypeInteger, Description: "Last line to return (inclusive); default the end of the file."},
		})
}

func (t *readTool) Invoke(ctx context.Context, call toolhost.Call) (any, error) {
	p, err := argString(call.Args, "path")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(p) == "" {
		return nil, fmt.Errorf("%w: path is required: the file to read", ErrBadArgument)
	}
	start, err1 := argInt(call.Args, "startLine", 1, 1, maxLineNumber)
	end, err2 := argInt(call.Args, "endLine", 0, 1, maxLineNumber)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if end != 0 && end < start {
		return nil, fmt.Errorf("%w: endLine %d is before startLine %d", ErrBadArgument, end, start)
	}
	tg, err := resolveTarget(t.access, p)
	if err != nil {
		return nil, err
	}
	f, size, err := openText(tg)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLines(ctx, f, tg.requested, size, start, end)
}

// openText opens the target if it is a regular file, checking on the open
// descriptor that it is the file that was checked, and refuses binary files.
// The returned file is positioned at its start.
func openText(tg target) (*os.File, int64, error) {
	info, err := os.Lstat(tg.resolved)
	if err != nil {
		return nil, 0, files.Unreadable(tg.requested, err)
	}
	if info.IsDir() {
		return nil, 0, files.Refusal(files.ErrNotRegularFile, tg.requested, "it is a directory; use DirectoryTree to list it")
	}
	if !info.Mode().IsRegular() {
		return nil, 0, files.Refusal(files.ErrNotRegularFile, tg.requested, "it is not a regular file (a device, fifo, socket or the like)")
	}
	f, err := files.OpenNoFollow(tg.resolved)
	if err != nil {
		return nil, 0, files.Unreadable(tg.requested, err)
	}
	opened, err := f.Stat()
	if err != nil || !os.SameFile(info, opened) {
		f.Close()
		return nil, 0, files.Refusal(files.ErrNotRegularFile, tg.requested, "it was replaced while being opened; try again")
	}
	head := make([]byte, sniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		f.Close()
		return nil, 0, files.Unreadable(tg.requested, err)
	}
	if bytes.IndexByte(head[:n], 0) >= 0 {
		f.Close()
		return nil, 0, files.Refusal(ErrBinaryFile, tg.requested, fmt.Sprintf("it is a binary file (%d bytes); ReadFile returns text only", opened.Size()))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, 0, files.Unreadable(tg.requested, err)
	}
	return f, opened.Size(), nil
}

// readLines returns lines start..end (end 0 = to the end) of r with a header
// line, bounded by maxReadOutput and maxReadScan.
func readLines(ctx context.Context, r io.Reader, name string, size int64, start, end int) (string, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, maxReadScan), 64<<10)
	var body strings.Builder
	line, first, last := 0, 0, 0
	var scanned int64
	var note string
	atEOF := false
	for {
		if line%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return "", fmt.Errorf("reading %s stopped: %w", quote(name), context.Cause(ctx))
			}
		}
		text, n, err := readLine(br)
		if n == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				atEOF = true
				if scanned >= maxReadScan && scanned < size {
					note = fmt.Sprintf("stopped after reading %d bytes, this tool's limit; the file has %d", maxReadScan, size)
				}
				break
			}
			return "", files.Unreadable(name, err)
		}
		line++
		scanned += int64(n)
		if files.HasPrivateKeyBlock(text) {
			return "", files.Refusal(files.ErrSecretFile, name, "it holds a private key")
		}
		if line < start {
			continue
		}
		if end != 0 && line > end {
			break
		}
		shown := text
		if len(shown) > maxLineBytes {
			shown = append(shown[:maxLineBytes:maxLineBytes], fmt.Sprintf(" … (line cut at %d bytes)", maxLineBytes)...)
		}
		if body.Len()+len(shown)+1 > maxReadOutput && first != 0 {
			note = fmt.Sprintf("the answer is limited to %d bytes; ask for startLine=%d to read on", maxReadOutput, line)
			break
		}
		if first == 0 {
			first = line
		}
		last = line
		body.Write(shown)
		body.WriteByte('\n')
	}
	var out strings.Builder
	switch {
	case line == 0:
		fmt.Fprintf(&out, "%s: empty file\n", name)
	case first == 0:
		return "", fmt.Errorf("%w: startLine %d is past the end of %s, which has %d lines", ErrBadArgument, start, quote(name), line)
	case atEOF && note == "":
		fmt.Fprintf(&out, "%s, lines %d-%d of %d:\n", name, first, last, line)
	default:
		fmt.Fprintf(&out, "%s, lines %d-%d (%d bytes in all):\n", name, first, last, size)
	}
	out.WriteString(body.String())
	if note != "" {
		fmt.Fprintf(&out, "[truncated: %s]\n", note)
	}
	return out.String(), nil
}

// readLine returns the next line without its newline (and a CR before it),
// keeping at most maxLineBytes+1 bytes of it, and how many bytes it used.
func readLine(br *bufio.Reader) ([]byte, int, error) {
	var out []byte
	n := 0
	for {
		frag, err := br.ReadSlice('\n')
		n += len(frag)
		if len(out) <= maxLineBytes {
			out = append(out, frag[:min(len(frag), maxLineBytes+1-len(out))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		out = bytes.TrimSuffix(out, []byte("\n"))
		out = bytes.TrimSuffix(out, []byte("\r"))
		if err != nil && n > 0 && errors.Is(err, io.EOF) {
			return out, n, nil
		}
		return out, n, err
	}
}
