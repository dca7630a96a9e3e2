package agentbridge_test

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	maybeSupervise() // the executor re-executes this binary as each run's supervisor
	if os.Getenv(envDialAsOtherUser) != "" {
		os.Exit(dialAsOtherUser())
	}
	if os.Getenv(envServeAsOtherUser) != "" {
		os.Exit(serveAsOtherUser())
	}
	os.Exit(m.Run())
}
