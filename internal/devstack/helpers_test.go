//go:build e2e

package devstack

import (
	"log/slog"

	sdklog "go.temporal.io/sdk/log"
)

func quietSDKLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
}
