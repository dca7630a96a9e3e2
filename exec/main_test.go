package exec

import (
	"os"
	"testing"

	"github.com/agentgate/agentgate/unixpg"
)

// TestMain lets the test binary serve as the unixpg supervisor, as the
// record-writer helper process of TestRecordWriteCrashSafety and as the
// helper program the executor's tests run (runTestHelper).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == testHelperArg {
		os.Exit(runTestHelper(os.Args[2:]))
	}
	unixpg.MaybeSupervise()
	if dir := os.Getenv(writerHelperEnv); dir != "" {
		runRecordWriterLoop(dir)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
