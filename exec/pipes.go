package exec

import "os"

// runPipes are a run's standard files: the child's ends, handed to the
// platform layer, and the parent's ends, read and written by the Run.
type runPipes struct {
	// childStdin, childStdout and childStderr go to the process; the parent
	// closes its copies once the process started.
	childStdin, childStdout, childStderr *os.File
	// stdout and stderr are the read ends of the output pipes.
	stdout, stderr *os.File
	// stdinW is the write end of the stdin pipe; nil when stdin is empty
	// (the child gets the null device).
	stdinW *os.File
	// stdinData is what feedStdin writes.
	stdinData []byte
}

// openRunPipes creates the pipes of one run. Empty stdin becomes the null
// device, so a program reading stdin sees end of file at once.
func openRunPipes(stdin []byte) (*runPipes, error) {
	p := &runPipes{stdinData: stdin}
	var err error
	if len(stdin) == 0 {
		p.childStdin, err = os.Open(os.DevNull)
	} else {
		p.childStdin, p.stdinW, err = os.Pipe()
	}
	if err != nil {
		return nil, err
	}
	if p.stdout, p.childStdout, err = os.Pipe(); err != nil {
		p.closeChildEnds()
		p.closeParentEnds()
		return nil, err
	}
	if p.stderr, p.childStderr, err = os.Pipe(); err != nil {
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
func (p *runPipes) closeParentEnds() {
	closeAll(p.stdout, p.stderr, p.stdinW)
}

// feedStdin writes stdin to the process and closes the pipe. A process that
// exits without reading all of it makes the write fail, which is not an
// error of the run.
func (p *runPipes) feedStdin() {
	if p.stdinW == nil {
		return
	}
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
