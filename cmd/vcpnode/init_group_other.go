//go:build !unix

package main

import "errors"

const systemGroup = "vcpnode"

// giveToGroup: Windows has no Unix groups; init's file modes do not apply.
func giveToGroup(*host, string, string) string { return "" }

func lookupGroupID(string) (int, error) { return 0, errors.New("no Unix groups here") }
