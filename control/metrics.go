package control

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
)

// MetricsServer serves GET /metrics over TCP.
type MetricsServer struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
}

// ListenMetrics serves the metrics of src on cfg.Listen until Close. It
// returns nil, nil when metrics are off (empty Listen). A non-loopback
// address is refused unless cfg.AllowRemote.
func ListenMetrics(src MetricsSource, cfg config.MetricsConfig, log zerolog.Logger) (*MetricsServer, error) {
	if cfg.Listen == "" {
		return nil, nil
	}
	if msg := config.MetricsListenProblem(cfg.Listen, cfg.AllowRemote); msg != "" {
		return nil, fmt.Errorf("metrics.listen: %s", msg)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", src.MetricsHandler())
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "vcpnode serves its metrics at /metrics", http.StatusNotFound)
	})
	s := &MetricsServer{ln: ln, done: make(chan struct{}), srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          newStdLog(log, "metrics"),
	}}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg("metrics endpoint stopped serving")
		}
	}()
	log.Info().Str("addr", s.Addr()).Msg("serving metrics at /metrics")
	return s, nil
}

// Addr is the address listened on (with the real port when Listen said :0).
func (s *MetricsServer) Addr() string { return s.ln.Addr().String() }

// Close stops the server, waiting for scrapes in progress until ctx ends.
func (s *MetricsServer) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	<-s.done
	return err
}

// newStdLog sends net/http's own complaints to the daemon's logger.
func newStdLog(l zerolog.Logger, component string) *log.Logger {
	return log.New(l.With().Str("component", component).Logger(), "", 0)
}
