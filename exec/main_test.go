package exec

import (
	"os"
	"testing"

	"github.com/agentgate/agentgate/unixpg"
)

// TestMain lets the test binary serve as the unixpg supervisor and as the
// record-writer helper process of TestRecordWriteCrashSafety.
func TestMain(m *testing.M) {
	unixpg.MaybeSupervise()
	if dir := os.Getenv(writerHelperEnv); dir != "" {
		runRecordWriterLoop(dir)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
