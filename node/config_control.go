package node

// ControlConfig is the [control] table: the daemon's local control socket.
type ControlConfig struct{}

// AuditConfig is the [audit] table: the record of remote calls.
type AuditConfig struct{}

// MetricsConfig is the [metrics] table: the optional Prometheus endpoint.
type MetricsConfig struct{}

func defaultControlConfig() ControlConfig { return ControlConfig{} }
func defaultMetricsConfig() MetricsConfig { return MetricsConfig{} }

func (c Config) checkControl(ps *problemList) {}
