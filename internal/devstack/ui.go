package devstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiserveroptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// uiServer is a running Temporal Web UI (ui-server, assets embedded in the
// module, nothing downloaded).
type uiServer struct {
	srv  *uiserver.Server
	done chan error // receives Start's result once the listener is closed
	url  string     // e.g. "http://127.0.0.1:8233"
}

// startUI starts the Web UI on p.bindIP:p.uiPort talking to the frontend at
// p.frontendHostPort(), with the settings the CLI uses (news fetch off,
// insecure CSRF cookie for plain HTTP, request logging off), and waits until
// GET /healthz answers 200 or ctx ends.
//
// ui-server's Start calls os.Exit (echo's Logger.Fatal) when it cannot bind
// its port, so the port is checked first; a process grabbing the port in
// between would still end the process.
func startUI(ctx context.Context, p *temporalPlan) (_ *uiServer, err error) {
	host := p.bindIP
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // ui-server formats "%s:%d"
	}
	cfg := &uiconfig.Config{
		Host:                host,
		Port:                p.uiPort,
		TemporalGRPCAddress: p.frontendHostPort(),
		EnableUI:            true,
		DefaultNamespace:    p.namespace,
		CORS:                uiconfig.CORS{CookieInsecure: true},
		HideLogs:            true,
		DisableNewsFetch:    true,
	}
	if err := checkPortsFree(p.bindIP, p.uiPort); err != nil {
		return nil, err
	}
	defer func() { // NewServer panics on bad config or missing assets
		if r := recover(); r != nil {
			err = fmt.Errorf("devstack: start Temporal UI: %v", r)
		}
	}()
	u := &uiServer{
		srv:  uiserver.NewServer(uiserveroptions.WithConfigProvider(cfg)),
		done: make(chan error, 1),
		url:  "http://" + net.JoinHostPort(p.hostIP, fmt.Sprint(p.uiPort)),
	}
	go func() { u.done <- u.srv.Start() }()
	if err := waitHTTPOK(ctx, u.url+"/healthz"); err != nil {
		u.stop()
		return nil, fmt.Errorf("devstack: Temporal UI did not come up on %s: %w", u.url, err)
	}
	return u, nil
}

// stop closes the UI listener and open connections and waits (at most 5 s)
// for Start to return. ui-server never closes its gRPC client connection to
// the frontend, so one idle connection object per UI instance stays behind.
func (u *uiServer) stop() {
	u.srv.Stop()
	select {
	case <-u.done:
	case <-time.After(5 * time.Second):
	}
}

// waitHTTPOK polls url every 50 ms until it answers 200 or ctx ends.
func waitHTTPOK(ctx context.Context, url string) error {
	hc := &http.Client{Timeout: time.Second}
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
