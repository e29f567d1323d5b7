//go:build !unix

package plugin

import "syscall"

// processGroups is false: without process groups a plugin's descendants
// could not be stopped, so stdio plugins are refused (ErrUnsupportedPlatform).
const processGroups = false

func groupAttr() *syscall.SysProcAttr { return nil }

func signalGroup(int, syscall.Signal) error { return ErrUnsupportedPlatform }

func groupAlive(int) bool { return false }
