// Package testuser runs tests again as an ordinary user, for the
// protections that must hold for a daemon not run by root: a copy of the
// test binary (the one go test builds sits in a private directory) is
// started as nobody and runs the tests a pattern names (Unix). Only _test
// files import it (internal/archtest checks).
package testuser
