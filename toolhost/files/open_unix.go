//go:build unix

package files

// ServingSupported says whether internal_request_file and the file
// tools work here (see open_other.go).
const ServingSupported = true
