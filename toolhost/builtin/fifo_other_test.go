//go:build !unix

package builtin

import "errors"

func mkfifo(string) error { return errors.New("no fifos on this system") }
