package runner

import (
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// sdkMetrics bridges the Temporal SDK's metrics (temporal_workflow_*,
// temporal_activity_*, ...) into the worker's Prometheus registry, so one
// /metrics endpoint serves both.
func sdkMetrics(reg *prometheus.Registry) (client.MetricsHandler, io.Closer) {
	reporter := tallyprom.NewReporter(tallyprom.Options{Registerer: reg, Gatherer: reg, OnRegisterError: func(error) {}})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sanitize,
	}, time.Second)
	return sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope)), closer
}

// sanitize is the SDK's Prometheus naming (sdktally.PrometheusSanitizeOptions)
// with label values keeping the characters of table names and phases
// ("shop.orders", "schema-blocked"): the SDK's set turns them into
// "shop_orders" and "schema_blocked", so the workflows' phase gauge would
// not join the pipeline metrics on their table label nor match the phase
// names. Prometheus label values may hold any UTF-8; names and keys keep
// the SDK's rules.
var sanitize = func() tally.SanitizeOptions {
	o := sdktally.PrometheusSanitizeOptions
	o.ValueCharacters = tally.ValidCharacters{Ranges: tally.AlphanumericRange,
		Characters: []rune{'_', '.', '-', ':', '/', '@', '+', '=', '#'}}
	return o
}()
