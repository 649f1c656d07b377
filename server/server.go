package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servesim/servesim/sim"
)

// Config is a simulated server. Zero fields take the defaults named on each.
type Config struct {
	// Server is the simulated deployment (sim.NewServer); its data-parallel replicas, if any,
	// are engines behind the one API server.
	Server *sim.Server
	// Seed seeds the engines' speculative-acceptance draws and the output-length model.
	Seed uint64
	// ModelName is the served model name: requests naming another are refused (404).
	ModelName string
	// Speed is simulated seconds per wall-clock second (default 1: real time).
	Speed float64
	// CharsPerToken is the tokenizer stand-in: a text prompt of c characters is ceil(c /
	// CharsPerToken) tokens (default 4). Prompts given as token ids count exactly.
	CharsPerToken float64
	// EOSMeanTokens is the output-length model of requests that do not set ignore_eos: the reply
	// ends with EOS after a geometric number of tokens of this mean (capped by max_tokens, at
	// least min_tokens). Zero: no EOS, every reply runs to max_tokens.
	EOSMeanTokens int
	// MaxBodyBytes bounds a request body (default 64 MiB: a 1M-token prompt as token ids is
	// about 8 MB).
	MaxBodyBytes int64
	// MaxConnections bounds the open client connections (default 4096); more wait to be
	// accepted.
	MaxConnections int
	// Grace is how long a shutdown lets running requests finish before cancelling them
	// (default 30 s).
	Grace time.Duration
	// WriteTimeout bounds the write of a response to a client that does not read (default 60 s);
	// the request is then cancelled. A stream's deadline moves forward by whole timeouts, so a
	// stalled chunk fails after between half the timeout and the timeout.
	WriteTimeout time.Duration
	// ReadHeaderTimeout bounds the reading of a request's headers (default 10 s): a client that
	// sends them slowly (slowloris) is disconnected.
	ReadHeaderTimeout time.Duration
	// BodyReadTimeout bounds the reading of a request body (default 60 s).
	BodyReadTimeout time.Duration
	// IdleTimeout closes a kept-alive connection idle this long (default 120 s).
	IdleTimeout time.Duration
	// VLLMVersion is what /version reports: the vLLM version simulated.
	VLLMVersion string
	// Log receives the server's periodic engine lines (nil: none).
	Log io.Writer
}

// MaxSpeed is the largest Config.Speed.
const MaxSpeed = 1e4

func (c *Config) defaults() error {
	if c.Server == nil {
		return errors.New("server: no simulated deployment")
	}
	if c.Speed == 0 {
		c.Speed = 1
	}
	if !(c.Speed > 0 && c.Speed <= MaxSpeed) {
		return fmt.Errorf("speed %v: want a number of simulated seconds per second in (0, %g]", c.Speed, MaxSpeed)
	}
	if c.CharsPerToken == 0 {
		c.CharsPerToken = 4
	}
	if !(c.CharsPerToken >= 0.5 && c.CharsPerToken <= 64) {
		return fmt.Errorf("chars per token %v: want 0.5 to 64", c.CharsPerToken)
	}
	if c.EOSMeanTokens < 0 {
		return fmt.Errorf("EOS mean %d tokens: want 0 (no EOS) or more", c.EOSMeanTokens)
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 64 << 20
	}
	if c.MaxConnections == 0 {
		c.MaxConnections = 4096
	}
	if c.Grace == 0 {
		c.Grace = 30 * time.Second
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 60 * time.Second
	}
	if c.ReadHeaderTimeout == 0 {
		c.ReadHeaderTimeout = 10 * time.Second
	}
	if c.BodyReadTimeout == 0 {
		c.BodyReadTimeout = 60 * time.Second
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 120 * time.Second
	}
	if c.MaxBodyBytes < 1024 || c.MaxConnections < 1 || c.Grace < 0 || c.WriteTimeout < 0 || c.ReadHeaderTimeout < 0 || c.BodyReadTimeout < 0 || c.IdleTimeout < 0 {
		return fmt.Errorf("server limits: body %d bytes, %d connections, grace %v, timeouts: write %v, read header %v, read body %v, idle %v",
			c.MaxBodyBytes, c.MaxConnections, c.Grace, c.WriteTimeout, c.ReadHeaderTimeout, c.BodyReadTimeout, c.IdleTimeout)
	}
	if c.ModelName == "" {
		c.ModelName = c.Server.Deployment.Model.Name
	}
	return nil
}

// Server is a simulated vLLM server: vLLM's OpenAI-compatible HTTP API in front of simulated
// engines (see doc.go).
type Server struct {
	cfg       Config
	lim       limits
	loop      *loop
	spec      int
	cacheInfo [][2]string
	streamLag lagHist
	ids       atomic.Uint64
	closing   atomic.Bool
	startOnce sync.Once
	stopOnce  sync.Once
	abort     chan struct{}
	abortOnce sync.Once
	// vocab is the synthetic output's words (read-only); vocabPlain is output.plain for it.
	vocab      []string
	vocabPlain int
}

// New builds a server; Start (or Run) starts its clock.
func New(cfg Config) (*Server, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	srv := cfg.Server
	s := &Server{cfg: cfg, spec: srv.Deployment.Engine.SpecTokens(), cacheInfo: cacheInfo(srv), abort: make(chan struct{})}
	s.lim = limits{model: cfg.ModelName, maxModelLen: srv.Deployment.Engine.MaxModelLen, vocab: srv.Deployment.Model.Vocab,
		charsPerToken: cfg.CharsPerToken, blockSize: srv.Layout.BlockSize, eosMean: cfg.EOSMeanTokens, seed: cfg.Seed}
	s.loop = newLoop(srv, cfg.Seed, cfg.Speed, cfg.Log)
	s.vocab, s.vocabPlain = words(), -1
	if plainJSON(s.vocab) {
		s.vocabPlain = 1
	}
	return s, nil
}

// Start starts the engine loop: simulated time 0 is now.
func (s *Server) Start() {
	s.startOnce.Do(func() {
		s.loop.clk.start = time.Now()
		go s.loop.run()
	})
}

// Stop stops the engine loop, cancelling every request still running (their streams end with an
// error event).
func (s *Server) Stop() {
	s.Start()
	s.stopOnce.Do(func() {
		select {
		case s.loop.cmds <- cmd{kind: cmdStop}:
		case <-s.loop.stopped:
		}
		<-s.loop.stopped
	})
}

// Abort cuts a graceful shutdown short: Run cancels the running requests now.
func (s *Server) Abort() { s.abortOnce.Do(func() { close(s.abort) }) }

// Run serves on ln until ctx is cancelled, then shuts down gracefully: no new requests (503),
// the running ones get Config.Grace (or until Abort) to finish, then the rest are cancelled (their
// streams end with an error event and [DONE]), and Run returns.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	s.Start()
	hs := s.httpServer()
	ll := newLimitListener(ln, s.cfg.MaxConnections)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ll) }()
	select {
	case err := <-errc:
		s.Stop()
		return err
	case <-ctx.Done():
	}
	s.closing.Store(true)
	gctx, cancel := context.WithTimeout(context.Background(), s.cfg.Grace)
	go func() {
		select {
		case <-s.abort:
			cancel()
		case <-gctx.Done():
		}
	}()
	err := hs.Shutdown(gctx)
	cancel()
	s.Stop()
	if err != nil {
		// The grace ran out: the streams were cancelled just now; let their handlers write
		// their last event, then close what is left.
		fctx, fcancel := context.WithTimeout(context.Background(), 5*time.Second)
		if hs.Shutdown(fctx) != nil {
			hs.Close()
		}
		fcancel()
	}
	<-errc
	return nil
}

// httpServer is the net/http server Run serves with: the configured timeouts, headers up to
// 64 kB, no error log (a client's broken connection is not the server's error).
func (s *Server) httpServer() *http.Server {
	return &http.Server{Handler: s.Handler(), ReadHeaderTimeout: s.cfg.ReadHeaderTimeout, IdleTimeout: s.cfg.IdleTimeout,
		MaxHeaderBytes: 64 << 10, ErrorLog: log.New(io.Discard, "", 0)}
}

// LagQuantiles are the clock lag's and the stream lag's quantiles in seconds, with their counts
// (see the servesim:*_lag_seconds metrics).
func (s *Server) LagQuantiles(q float64) (clock, stream float64, nClock, nStream uint64) {
	snap, ok := s.snapshot()
	if !ok {
		return
	}
	sl := s.streamLag.snapshot()
	return snap.lag.quantile(q), sl.quantile(q), snap.lag.n, sl.n
}

func (s *Server) snapshot() (*snapshot, bool) {
	reply := make(chan *snapshot, 1)
	select {
	case s.loop.cmds <- cmd{kind: cmdSnapshot, reply: reply}:
	case <-s.loop.stopped:
		// The loop is over: its state is final, and no longer written.
		return s.loop.snapshot(), true
	}
	select {
	case snap := <-reply:
		return snap, true
	case <-s.loop.stopped:
		return s.loop.snapshot(), true
	}
}

// Handler is the HTTP API.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "servesim")
		route := func(method string, h func(http.ResponseWriter, *http.Request)) {
			if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
				w.Header().Set("Allow", method)
				writeDetail(w, http.StatusMethodNotAllowed)
				return
			}
			h(w, r)
		}
		switch r.URL.Path {
		case "/v1/completions":
			route(http.MethodPost, func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, false) })
		case "/v1/chat/completions":
			route(http.MethodPost, func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, true) })
		case "/v1/models":
			route(http.MethodGet, s.models)
		case "/health":
			route(http.MethodGet, s.health)
		case "/version":
			route(http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusOK, map[string]string{"version": s.cfg.VLLMVersion})
			})
		case "/metrics":
			route(http.MethodGet, s.metrics)
		default:
			writeDetail(w, http.StatusNotFound)
		}
	})
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if s.closing.Load() {
		writeError(w, &apiError{status: http.StatusServiceUnavailable, typ: "ServiceUnavailableError", message: "the server is shutting down"})
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	type permission struct {
		ID                 string  `json:"id"`
		Object             string  `json:"object"`
		Created            int64   `json:"created"`
		AllowCreateEngine  bool    `json:"allow_create_engine"`
		AllowSampling      bool    `json:"allow_sampling"`
		AllowLogprobs      bool    `json:"allow_logprobs"`
		AllowSearchIndices bool    `json:"allow_search_indices"`
		AllowView          bool    `json:"allow_view"`
		AllowFineTuning    bool    `json:"allow_fine_tuning"`
		Organization       string  `json:"organization"`
		Group              *string `json:"group"`
		IsBlocking         bool    `json:"is_blocking"`
	}
	type model struct {
		ID          string       `json:"id"`
		Object      string       `json:"object"`
		Created     int64        `json:"created"`
		OwnedBy     string       `json:"owned_by"`
		Root        string       `json:"root"`
		Parent      *string      `json:"parent"`
		MaxModelLen int          `json:"max_model_len"`
		Permission  []permission `json:"permission"`
	}
	created := s.loop.clk.start.Unix()
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []model{{
		ID: s.cfg.ModelName, Object: "model", Created: created, OwnedBy: "vllm", Root: s.cfg.ModelName,
		MaxModelLen: s.lim.maxModelLen,
		Permission: []permission{{ID: fmt.Sprintf("modelperm-%016x", mix64(s.cfg.Seed, 1)), Object: "model_permission", Created: created,
			AllowSampling: true, AllowLogprobs: true, AllowView: true, Organization: "*"}},
	}}})
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	snap, ok := s.snapshot()
	if !ok {
		writeError(w, &apiError{status: http.StatusServiceUnavailable, typ: "ServiceUnavailableError", message: "the server is shutting down"})
		return
	}
	var b bytes.Buffer
	s.writeMetrics(&b, snap, s.streamLag.snapshot())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write(b.Bytes())
}

// generate serves /v1/completions and /v1/chat/completions.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, chat bool) {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(s.cfg.BodyReadTimeout))
	data, aerr := readBody(w, r, s.cfg.MaxBodyBytes)
	if aerr != nil {
		// The rest of a body that did not arrive is not waited for (the read deadline stays):
		// the connection closes after the error.
		w.Header().Set("Connection", "close")
		writeError(w, aerr)
		return
	}
	rc.SetReadDeadline(time.Time{})
	var q *request
	if chat {
		q, aerr = s.lim.chat(data)
	} else {
		q, aerr = s.lim.completion(data)
	}
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if s.closing.Load() {
		writeError(w, &apiError{status: http.StatusServiceUnavailable, typ: "ServiceUnavailableError", message: "the server is shutting down"})
		return
	}
	st := newStream(q, time.Now())
	select {
	case s.loop.cmds <- cmd{kind: cmdSubmit, st: st}:
	case <-s.loop.stopped:
		writeError(w, &apiError{status: http.StatusServiceUnavailable, typ: "ServiceUnavailableError", message: "the server is shutting down"})
		return
	}
	o := newOutput(s, q, chat)
	if q.stream {
		s.streamOut(w, r, rc, st, o)
	} else {
		s.wholeOut(w, r, rc, st, o)
	}
}

// cancel tells the loop the client went away.
func (s *Server) cancel(st *stream) {
	select {
	case s.loop.cmds <- cmd{kind: cmdCancel, st: st, at: time.Now()}:
	case <-s.loop.stopped:
	}
}

// wholeOut waits for the whole reply and writes it as one JSON response.
func (s *Server) wholeOut(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, st *stream, o *output) {
	// The connection's write deadline is this response's; a kept-alive connection's next
	// request starts without one.
	defer rc.SetWriteDeadline(time.Time{})
	for {
		select {
		case <-st.ready:
		case <-r.Context().Done():
			s.cancel(st)
			return
		}
		t := st.take()
		if t.done {
			rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		}
		if t.err != nil {
			writeError(w, t.err)
			return
		}
		if t.done {
			o.tokens = t.total
			writeJSON(w, http.StatusOK, o.whole(t.reason))
			return
		}
	}
}

// streamOut writes the reply as server-sent events, one chunk per delivery (several tokens under
// speculative decoding; deliveries a slow client has not taken yet are merged), then the usage
// chunk when asked and "data: [DONE]".
func (s *Server) streamOut(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, st *stream, o *output) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	rc.Flush()
	var buf bytes.Buffer
	var deadline time.Time
	defer rc.SetWriteDeadline(time.Time{})
	for {
		select {
		case <-st.ready:
		case <-r.Context().Done():
			s.cancel(st)
			return
		}
		t := st.take()
		if t.n == 0 && !t.done {
			continue
		}
		buf.Reset()
		if t.n > 0 {
			o.chunk(&buf, t)
		}
		if t.err != nil {
			writeEvent(&buf, t.err.body())
		}
		if t.done {
			if o.q.usage && t.err == nil {
				o.usageChunk(&buf)
			}
			buf.WriteString("data: [DONE]\n\n")
		}
		// The write deadline moves forward by whole WriteTimeouts, not at every chunk (that would
		// re-arm the connection's timer for every token): a chunk a client does not take fails
		// after between half the timeout and the timeout.
		if now := time.Now(); deadline.Sub(now) < s.cfg.WriteTimeout/2 {
			deadline = now.Add(s.cfg.WriteTimeout)
			rc.SetWriteDeadline(deadline)
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			s.cancel(st)
			return
		}
		if err := rc.Flush(); err != nil {
			s.cancel(st)
			return
		}
		if t.n > 0 {
			s.streamLag.add(time.Since(s.loop.clk.wall(t.due)))
		}
		if t.done {
			return
		}
	}
}

func writeEvent(b *bytes.Buffer, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("server: encoding an event: %v", err))
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
}
