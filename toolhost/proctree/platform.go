package proctree

// platform is one mode's shared state: it makes the trees' backends.
type platform interface {
	newTree(id string) (backend, error)
	close()
}
