package node

// PluginsConfig is the [plugins] table: VCP plugin folders this node hosts.
type PluginsConfig struct {
	// Dirs are VCP "Plugin" directories, each holding plugin folders.
	Dirs []string `toml:"dirs"`
}

func defaultPluginsConfig() PluginsConfig { return PluginsConfig{} }

func (c Config) checkPlugins(ps *problemList) {
	for i, dir := range c.Plugins.Dirs {
		if msg := absPathProblem(dir); msg != "" {
			ps.add(indexKey("plugins.dirs", i), "%s", msg)
		}
	}
}
