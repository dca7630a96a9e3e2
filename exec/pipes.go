package exec

import "os"

// runPipes are a run's standard files: the child's ends, handed to the
// platform layer, and the parent's ends, read and written by the Run.
type runPipes struct {
	// childStdin, childStdout and childStderr go to the process; the parent
	// closes its copies once the process started. childStdin is nil when
	// stdin is empty: the platform layer then gives the process its shared
	// null device, so a program reading stdin sees end of file at once.
	childStdin, childStdout, childStderr *os.File
	// stdout and stderr are the read ends of the output pipes; each is
	// closed by the goroutine that pumps it, once it has read to the end.
	stdout, stderr *os.File
	// stdinW is the write end of the stdin pipe; nil when stdin is empty.
	stdinW *os.File
	// stdinData is what feedStdin writes.
	stdinData []byte
}

// openRunPipes creates the pipes of one run: one per output stream and,
// only when stdin is not empty, one for stdin.
func openRunPipes(stdin []byte) (*runPipes, error) {
	p := &runPipes{stdinData: stdin}
	var err error
	if len(stdin) > 0 {
		if p.childStdin, p.stdinW, err = os.Pipe(); err != nil {
			return nil, err
		}
	}
	if p.stdout, p.childStdout, err = newOutputPipe(); err != nil {
		p.closeChildEnds()
		p.closeParentEnds()
		return nil, err
	}
	if p.stderr, p.childStderr, err = newOutputPipe(); err != nil {
		p.closeChildEnds()
		p.closeParentEnds()
		return nil, err
	}
	enlargePipe(p.childStdout)
	return p, nil
}

// closeChildEnds closes the parent's copies of the child's ends, so that
// the output pipes reach end of file when the process tree is gone.
func (p *runPipes) closeChildEnds() {
	closeAll(p.childStdin, p.childStdout, p.childStderr)
}

// closeParentEnds closes the parent's ends; a blocked stdin write returns.
// Closing an end twice is harmless (the pumps close theirs when done).
func (p *runPipes) closeParentEnds() {
	closeAll(p.stdout, p.stderr, p.stdinW)
}

// feedStdin writes stdin to the process and closes the pipe. A process that
// exits without reading all of it makes the write fail, which is not an
// error of the run. Only called when stdinW is set.
func (p *runPipes) feedStdin() {
	p.stdinW.Write(p.stdinData)
	p.stdinW.Close()
}

// closeAll closes every non-nil file, ignoring errors (the files are pipe
// ends whose close cannot lose data).
func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
