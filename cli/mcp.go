package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/prefs"
)

// Bounds of the MCP tools' waits.
const (
	// mcpDefaultWait is how long run_command and command_output wait for the
	// command to finish (or the person to answer) when wait_ms is absent.
	mcpDefaultWait = 30 * time.Second
	// mcpMaxWait caps wait_ms.
	mcpMaxWait = 120 * time.Second
	// mcpMaxOutput caps the stdout (and stderr) bytes one result carries.
	mcpMaxOutput = 256 << 10
	// mcpAppStartWait is how long `agentgate mcp` waits for an app it
	// started to open its socket.
	mcpAppStartWait = 5 * time.Second
)

// mcpRefusalAdvice ends every refusal a model reads.
const mcpRefusalAdvice = "This is agentgate's decision or a person's, not a transient failure: do not retry the same command, and do not work around it with another tool, a shell, a script or a different spelling. Tell the person what you wanted to run and why."

// mcpServer is `agentgate mcp`: a stdio MCP server whose tools are a client
// of the running desktop app's bridge. The connection is made at the first
// tool call, with the provider from --provider or the MCP client's declared
// name, and the project from --project, the client's first file:// root, or
// the working directory.
type mcpServer struct {
	// e is the environment (socket, cwd).
	e env
	// provider and project are the --provider and --project flags.
	provider, project string
	// startApp starts the desktop app detached; nil never starts it.
	startApp func() error

	mu sync.Mutex
	// bridge is the open connection, nil before the first call or after it
	// broke.
	bridge *client.Client
}

// newMCPServer builds the MCP server with its four tools.
func newMCPServer(m *mcpServer) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "agentgate", Version: version}, &mcp.ServerOptions{
		Instructions: "agentgate runs commands on this machine only with a person's permission: either an allow-list rule they wrote, " +
			"or their approval on a desktop card right now. Use run_command instead of any other way of running commands. " +
			"A refusal is final for that command: never retry it or route around it.",
	})
	addTool(s, &mcp.Tool{
		Name: "run_command",
		Description: "Run one program with arguments on the person's machine, in the project, through agentgate. " +
			"argv is the program and its arguments as a list; no shell is involved, so pipes, redirections, globs, " +
			"variables and `&&` do not work (split the work into separate commands, or ask the person). " +
			"If an allow-list rule allows the command it starts at once; otherwise a person is asked on their desktop, " +
			"which can take a while: the call waits up to wait_ms (default 30000) and may return state \"pending\"; " +
			"then call command_output with the run_id to keep waiting. The result holds the state, the exit code once it " +
			"exited (a non-zero exit is a normal result, not a failure of this tool), stdout so far and a cursor for " +
			"command_output, and stderr once it finished. Every command is bounded by timeout_ms (default 120000, " +
			"max 600000) and the person can see and stop it. If the call returns an error, the command was refused " +
			"(by a person, or because it is invalid or not allowed): read the reason, do not retry it and do not try " +
			"to run it another way.",
	}, m.runCommand)
	addTool(s, &mcp.Tool{
		Name: "command_output",
		Description: "Wait for a command started with run_command and read more of its stdout. Pass run_id and the cursor " +
			"from the previous result (0 to read from the start). Returns when the command finishes or after wait_ms " +
			"(default 30000, max 120000), with the state, exit code once exited, the stdout from the cursor, the next " +
			"cursor, and stderr once finished. While the state is \"pending\" a person has not answered yet; keep " +
			"polling with a long wait_ms rather than often. An error means the command was refused, expired unanswered " +
			"or withdrawn: it did not run; do not retry it or work around it.",
	}, m.commandOutput)
	addTool(s, &mcp.Tool{
		Name: "cancel_command",
		Description: "Stop a command started with run_command: a pending request is withdrawn (nothing runs), a running " +
			"command and every process it started are ended. Returns the state it ended in.",
	}, m.cancelCommand)
	addTool(s, &mcp.Tool{
		Name:        "list_commands",
		Description: "List the commands this session proposed, oldest first, with run_id, state, argv, working directory and exit code.",
	}, m.listCommands)
	return s
}

// runCommandIn is run_command's input.
type runCommandIn struct {
	// Argv is the program and its arguments.
	Argv []string `json:"argv" jsonschema:"the program and its arguments, e.g. [\"go\", \"test\", \"./...\"]; no shell: each element is passed as is"`
	// Cwd is the working directory.
	Cwd string `json:"cwd,omitempty" jsonschema:"working directory relative to the project root (default: the root); must stay inside the project"`
	// Stdin is text fed to the command.
	Stdin string `json:"stdin,omitempty" jsonschema:"text fed to the command's standard input (at most 512 KiB); default none"`
	// TimeoutMS bounds the run.
	TimeoutMS int64 `json:"timeout_ms,omitempty" jsonschema:"time limit in milliseconds, 1 to 600000 (default 120000); the command and everything it started are ended when it passes"`
	// Reason is shown to the person.
	Reason string `json:"reason,omitempty" jsonschema:"one sentence for the person approving it: why you want to run this"`
	// WaitMS bounds this call's wait.
	WaitMS int64 `json:"wait_ms,omitempty" jsonschema:"how long this call waits for the command to finish or the person to answer, in milliseconds (default 30000, max 120000)"`
}

// commandOutputIn is command_output's input.
type commandOutputIn struct {
	// RunID names the run.
	RunID string `json:"run_id" jsonschema:"the run_id returned by run_command"`
	// Cursor is the stdout offset.
	Cursor int64 `json:"cursor,omitempty" jsonschema:"stdout byte offset to read from: the cursor of the previous result, 0 for the start"`
	// WaitMS bounds the wait.
	WaitMS int64 `json:"wait_ms,omitempty" jsonschema:"how long to wait for the command to finish, in milliseconds (default 30000, max 120000)"`
}

// runIDIn names a run.
type runIDIn struct {
	// RunID names the run.
	RunID string `json:"run_id" jsonschema:"the run_id returned by run_command"`
}

// commandOut is what run_command and command_output return.
type commandOut struct {
	// RunID names the run.
	RunID string `json:"run_id" jsonschema:"pass to command_output and cancel_command"`
	// State is pending, queued, running, exited, timed_out, cancelled,
	// failed_to_start or lost.
	State string `json:"state" jsonschema:"pending (a person is deciding), queued, running, exited, timed_out, cancelled, failed_to_start or lost"`
	// Done is true in a final state.
	Done bool `json:"done" jsonschema:"true once the command ended; no more output will come"`
	// ExitCode is set once exited.
	ExitCode *int `json:"exit_code,omitempty" jsonschema:"the exit code, once the state is exited"`
	// Stdout is stdout from the cursor.
	Stdout string `json:"stdout" jsonschema:"standard output from the requested cursor (invalid UTF-8 bytes escaped as \\xNN)"`
	// Cursor is where the next read starts.
	Cursor int64 `json:"cursor" jsonschema:"pass to command_output to read what follows"`
	// StdoutDropped says earlier bytes are gone.
	StdoutDropped bool `json:"stdout_dropped,omitempty" jsonschema:"true when some output before this stdout is no longer kept"`
	// Stderr is stderr, once finished (up to 256 KiB).
	Stderr string `json:"stderr,omitempty" jsonschema:"standard error, once the command ended (at most 256 KiB)"`
	// Error explains timed_out, cancelled, failed_to_start and lost.
	Error string `json:"error,omitempty"`
	// Changes lists what the command changed, once finished and known.
	Changes any `json:"changes,omitempty" jsonschema:"files the command created, modified and deleted under its working directory ({created, modified, deleted, incomplete?, reason?, method, cover}), once it finished and the summary is made"`
	// ChangesPending says the summary is still being made.
	ChangesPending bool `json:"changes_pending,omitempty" jsonschema:"true when the command finished and the list of files it changed is still being made: call command_output with this run_id to get it"`
	// Next says what to do next.
	Next string `json:"next" jsonschema:"what to do next"`
}

// listOut is list_commands' result.
type listOut struct {
	// Runs are the session's runs.
	Runs []wire.RunInfo `json:"runs"`
}

// cancelOut is cancel_command's result.
type cancelOut struct {
	// RunID names the run.
	RunID string `json:"run_id"`
	// State is the state after the cancel.
	State string `json:"state"`
}

func (m *mcpServer) runCommand(ctx context.Context, req *mcp.CallToolRequest, in runCommandIn) (commandOut, error) {
	c, err := m.conn(ctx, req.Session)
	if err != nil {
		return commandOut{}, err
	}
	p := wire.ProposeParams{Argv: in.Argv, Cwd: in.Cwd, Stdin: in.Stdin, Reason: in.Reason}
	if in.TimeoutMS != 0 {
		t := in.TimeoutMS
		p.TimeoutMS = &t
	}
	// One round trip: the proposal waits for its end (wait_ms) in the bridge.
	ms := mcpWaitMS(in.WaitMS)
	p.WaitMS, p.MaxBytes = &ms, mcpMaxOutput
	res, err := c.Propose(ctx, p)
	if client.Code(err) == wire.RefuseInvalidParams && strings.Contains(err.Error(), `"wait_ms"`) {
		// An app older than this agentgate mcp does not know wait_ms; it
		// refused while decoding, before anything was audited or run.
		p.WaitMS, p.MaxBytes = nil, 0
		res, err = c.Propose(ctx, p)
	}
	if client.Code(err) == wire.RefuseShuttingDown {
		// The bridge is going away or handed over (an agentgate without
		// windows, to the desktop app): nothing ran; propose again on a new
		// connection, once.
		m.reset()
		if c, err = m.conn(ctx, req.Session); err != nil {
			return commandOut{}, err
		}
		res, err = c.Propose(ctx, p)
	}
	if err != nil {
		return commandOut{}, m.toolError(err)
	}
	if res.Wait == nil { // the proposal was not waited on: wait now
		return m.waitFor(ctx, c, res.RunID, 0, in.WaitMS)
	}
	return m.commandResult(ctx, c, res.RunID, *res.Wait), nil
}

func (m *mcpServer) commandOutput(ctx context.Context, req *mcp.CallToolRequest, in commandOutputIn) (commandOut, error) {
	c, err := m.conn(ctx, req.Session)
	if err != nil {
		return commandOut{}, err
	}
	return m.waitFor(ctx, c, in.RunID, in.Cursor, in.WaitMS)
}

func (m *mcpServer) cancelCommand(ctx context.Context, req *mcp.CallToolRequest, in runIDIn) (cancelOut, error) {
	c, err := m.conn(ctx, req.Session)
	if err != nil {
		return cancelOut{}, err
	}
	res, err := c.Cancel(ctx, in.RunID)
	if err != nil {
		return cancelOut{}, m.toolError(err)
	}
	return cancelOut{RunID: in.RunID, State: res.State}, nil
}

func (m *mcpServer) listCommands(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (listOut, error) {
	c, err := m.conn(ctx, req.Session)
	if err != nil {
		return listOut{}, err
	}
	res, err := c.List(ctx)
	if err != nil {
		return listOut{}, m.toolError(err)
	}
	if res.Runs == nil {
		res.Runs = []wire.RunInfo{}
	}
	return listOut{Runs: res.Runs}, nil
}

// addTool registers a tool the way mcp.AddTool does — input and output
// schemas inferred from In and Out (descriptions from the jsonschema tags),
// both advertised; the arguments validated against the input schema (with
// its defaults applied) before h runs, an invalid call answered with an
// error result; h's error returned as an error result; its output sent as
// structuredContent and, serialised, as the text content — except that the
// output is not validated against the output schema on every call. The
// output is always a value of Out that this program built, so that check
// could only fail on a bug here, and it costs a decode and a schema walk of
// the whole result (stdout included) per call.
func addTool[In, Out any](s *mcp.Server, t *mcp.Tool, h func(context.Context, *mcp.CallToolRequest, In) (Out, error)) {
	inSchema, err := jsonschema.ForType(reflect.TypeFor[In](), &jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("tool %s: inferring the input schema: %v", t.Name, err))
	}
	inResolved, err := inSchema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Sprintf("tool %s: resolving the input schema: %v", t.Name, err))
	}
	outSchema, err := jsonschema.ForType(reflect.TypeFor[Out](), &jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("tool %s: inferring the output schema: %v", t.Name, err))
	}
	tool := *t
	tool.InputSchema, tool.OutputSchema = inSchema, outSchema
	s.AddTool(&tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in, err := decodeToolInput[In](req.Params.Arguments, inResolved)
		if err != nil {
			res := &mcp.CallToolResult{}
			res.SetError(fmt.Errorf("validating \"arguments\": %v", err))
			return res, nil
		}
		out, err := h(ctx, req, in)
		if err != nil {
			res := &mcp.CallToolResult{}
			res.SetError(err)
			return res, nil
		}
		data, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encoding the %s result: %w", t.Name, err)
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(data)}},
			StructuredContent: json.RawMessage(data),
		}, nil
	})
}

// decodeToolInput checks a call's arguments against the tool's resolved
// input schema, with the schema's defaults applied (absent arguments are the
// empty object), and decodes them into an In. The inferred schema of a
// struct allows no other properties, so only exactly named fields reach the
// decoder; an argument given twice is refused (decoding would keep the last
// one, and a gate never guesses which of two values counts).
func decodeToolInput[In any](args json.RawMessage, schema *jsonschema.Resolved) (In, error) {
	var in In
	v := map[string]any{}
	if dup := wire.DuplicateMember(args); dup != "" {
		return in, fmt.Errorf("argument %q appears twice; send each argument once", dup)
	}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &v); err != nil {
			return in, fmt.Errorf("unmarshaling arguments: %w", err)
		}
	}
	if err := schema.ApplyDefaults(&v); err != nil {
		return in, fmt.Errorf("applying schema defaults: %w", err)
	}
	if err := schema.Validate(v); err != nil {
		return in, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return in, err
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return in, err
	}
	return in, nil
}

// mcpWaitMS turns a tool's wait_ms into the bridge's: mcpDefaultWait when
// absent or not positive, at most mcpMaxWait.
func mcpWaitMS(waitMS int64) int64 {
	wait := time.Duration(waitMS) * time.Millisecond
	if wait <= 0 {
		wait = mcpDefaultWait
	}
	return min(wait, mcpMaxWait).Milliseconds()
}

// waitFor waits on a run from cursor for up to waitMS and builds the result.
func (m *mcpServer) waitFor(ctx context.Context, c *client.Client, id string, cursor, waitMS int64) (commandOut, error) {
	ms := mcpWaitMS(waitMS)
	res, err := c.Wait(ctx, wire.WaitParams{RunID: id, Cursor: cursor, WaitMS: &ms, MaxBytes: mcpMaxOutput})
	if err != nil {
		return commandOut{}, m.toolError(err)
	}
	return m.commandResult(ctx, c, id, res), nil
}

// commandResult builds a tool result from an exec.wait result of run id,
// reading stderr (one more call) once the run finished with some.
func (m *mcpServer) commandResult(ctx context.Context, c *client.Client, id string, res wire.WaitResult) commandOut {
	out := commandOut{
		RunID: id, State: res.State, ExitCode: res.ExitCode, Stdout: res.Stdout.Data,
		Cursor: res.Stdout.Cursor, StdoutDropped: res.Stdout.Dropped, Error: res.Error,
		Changes: res.Changes, ChangesPending: res.ChangesPending,
	}
	switch res.State {
	case wire.StatePending:
		out.Next = "A person is deciding on their desktop. Call command_output with this run_id and a long wait_ms (e.g. 60000) to keep waiting; do not propose the command again."
	case wire.StateQueued, "running":
		out.Next = "Still running. Call command_output with this run_id and cursor to wait for more output, or cancel_command to stop it."
	default:
		out.Done = true
		if !res.Stdout.EOF {
			out.Next = "Finished; more stdout remains: call command_output with this run_id and cursor."
		} else {
			out.Next = "Finished."
		}
		if res.ChangesPending {
			out.Next += " The list of files it changed is still being made; call command_output with this run_id if you need it."
		}
		if res.StderrBytes > 0 {
			if e, err := c.Output(ctx, wire.OutputParams{RunID: id, Stream: "stderr", MaxBytes: mcpMaxOutput}); err == nil {
				out.Stderr = e.Data
			}
		}
	}
	return out
}

// reset drops the bridge connection; the next call connects again.
func (m *mcpServer) reset() {
	m.mu.Lock()
	if m.bridge != nil {
		m.bridge.Close()
		m.bridge = nil
	}
	m.mu.Unlock()
}

// toolError turns a bridge error into the error a model reads. A refusal
// says its code, the reason and that it must not be retried or worked
// around; a broken connection is reset for the next call.
func (m *mcpServer) toolError(err error) error {
	var remote *client.Error
	if errors.As(err, &remote) {
		return fmt.Errorf("refused (%s): %s. %s", remote.Code, remote.Message, mcpRefusalAdvice)
	}
	m.reset()
	return fmt.Errorf("the connection to the agentgate app failed (%v); the command's fate is unknown: call list_commands to see it before proposing anything again", err)
}

// conn returns the bridge connection, making it (and starting the app if
// needed) on first use.
func (m *mcpServer) conn(ctx context.Context, session *mcp.ServerSession) (*client.Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bridge != nil && !m.bridge.Closed() {
		return m.bridge, nil
	}
	if m.bridge != nil { // the bridge hung up (an app that quit or handed over): connect again
		m.bridge.Close()
		m.bridge = nil
	}
	provider, clientName := m.provider, "agentgate mcp"
	var params *mcp.InitializeParams
	if session != nil {
		params = session.InitializeParams()
	}
	if params != nil && params.ClientInfo != nil {
		clientName = "agentgate mcp (" + strings.TrimSpace(params.ClientInfo.Name+" "+params.ClientInfo.Version) + ")"
		if provider == "" {
			provider = providerFromClientName(params.ClientInfo.Name)
		}
	}
	root, err := m.projectRoot(ctx, session, params)
	if err != nil {
		return nil, err
	}
	// Before the socket is dialled or the app started (which takes this
	// process's state directory and socket): agentgate's own places must
	// lie outside the project and wherever commands may write.
	if err := m.e.checkDirs(root); err != nil {
		return nil, fmt.Errorf("%v. No command can run through agentgate until then; do not run the command another way", err)
	}
	c, err := client.Dial(m.e.socket)
	if err != nil && m.startApp != nil {
		if startErr := m.startApp(); startErr == nil {
			deadline := time.Now().Add(mcpAppStartWait)
			for time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				if c, err = client.Dial(m.e.socket); err == nil {
					break
				}
			}
		} else {
			err = fmt.Errorf("%v; starting it failed: %v", err, startErr)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the agentgate desktop app is not running and could not be started (%v). No command can run until a person starts it: ask them to run `agentgate` (or open agentgate from their applications menu). Do not run the command another way", err)
	}
	if _, err := c.Hello(ctx, wire.HelloParams{Provider: provider, ProjectRoot: root, Client: clientName}); err != nil {
		c.Close()
		return nil, fmt.Errorf("the agentgate app refused this session: %v", err)
	}
	m.bridge = c
	return c, nil
}

// projectRoot picks the project: --project, else the client's first
// file:// root, else the working directory — each mapped to its enclosing
// git work tree by prefs.ProjectRoot.
func (m *mcpServer) projectRoot(ctx context.Context, session *mcp.ServerSession, params *mcp.InitializeParams) (string, error) {
	dir := m.project
	if dir == "" && session != nil && params != nil && params.Capabilities != nil && params.Capabilities.RootsV2 != nil {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		roots, err := session.ListRoots(rctx, nil)
		cancel()
		if err == nil {
			for _, r := range roots.Roots {
				if u, err := url.Parse(r.URI); err == nil && u.Scheme == "file" && u.Path != "" {
					dir = filepath.FromSlash(u.Path)
					break
				}
			}
		}
	}
	if dir == "" {
		dir = m.e.cwd
	}
	root, err := prefs.ProjectRoot(dir)
	if err != nil {
		return "", fmt.Errorf("the project directory %s cannot be used: %v; start `agentgate mcp --project DIR`", dir, err)
	}
	return root, nil
}

// providerFromClientName makes a provider name from an MCP client's
// declared name: lower case, runs of characters a provider name may not
// hold become '-', trimmed ("Claude Code" → "claude-code"). It returns ""
// when nothing valid remains.
func providerFromClientName(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	p := strings.Trim(b.String(), "-.")
	if prefs.ValidateProviderName(p) != nil {
		return ""
	}
	return p
}

// stdoutNoClose is standard output for the MCP transport, which closes its
// writer when the session ends: stdout stays open for the rest of the
// process (as with mcp.StdioTransport).
type stdoutNoClose struct {
	// Writer is standard output.
	io.Writer
}

// Close does nothing and returns nil.
func (stdoutNoClose) Close() error { return nil }

// relayProcs runs this process on one P (GOMAXPROCS 1) unless GOMAXPROCS
// is set. `agentgate mcp` only relays between one client and the bridge,
// which one P serves; with more, the runtime's idle Ps spin after every
// message, taking a core from the client, the app and the run on a
// two-core machine: run_command's p50 measured 4.0–4.5 ms with one P,
// 5.0–7.5 ms with two (cli BenchmarkMCPRunCommand, 2026-12-01).
func relayProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// runMCP is `agentgate mcp [--provider NAME] [--project DIR]`: serves MCP on
// stdin/stdout until the client disconnects. Diagnostics go to stderr only.
func runMCP(args []string, e env) int {
	relayProcs()
	flags := flag.NewFlagSet("mcp", flag.ContinueOnError)
	flags.SetOutput(e.stderr)
	m := &mcpServer{e: e, startApp: func() error { return startAppDetached(e.executable, e.paths.StateDir) }}
	flags.StringVar(&m.provider, "provider", "", "provider name for provider-scope rules (default: from the MCP client's name)")
	flags.StringVar(&m.project, "project", "", "project directory (default: the client's first root, else the working directory)")
	if err := flags.Parse(args); err != nil || flags.NArg() != 0 {
		fmt.Fprintln(e.stderr, "usage: agentgate mcp [--provider NAME] [--project DIR]")
		return exitDeclined
	}
	if m.provider != "" {
		if err := prefs.ValidateProviderName(m.provider); err != nil {
			fmt.Fprintf(e.stderr, "agentgate mcp: %v\n", err)
			return exitDeclined
		}
	}
	if err := e.checkDirs(); err != nil {
		// Said at once for the person reading the client's log; every tool
		// call answers it too (conn), so that the model learns it.
		fmt.Fprintf(e.stderr, "agentgate mcp: %v\n", err)
	}
	s := newMCPServer(m)
	// mcp.StdioTransport over our own stdin: the same newline-delimited
	// JSON-RPC, read from mcpStdin; stdout is never closed by the transport.
	// At the end of input the requests already read are answered first.
	err := s.Run(context.Background(), answerBeforeEOF{&mcp.IOTransport{Reader: mcpStdin(), Writer: stdoutNoClose{os.Stdout}}})
	m.mu.Lock()
	if m.bridge != nil {
		m.bridge.Close()
	}
	m.mu.Unlock()
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, os.ErrClosed) && !strings.Contains(err.Error(), "EOF") {
		fmt.Fprintf(e.stderr, "agentgate mcp: %v\n", err)
		return exitFailed
	}
	return exitOK
}
