// Package agente2e drives the real agent CLIs — Claude Code, Gemini CLI and
// Codex, installed from npm at pinned versions — against fake model servers
// this package owns, with agentgate wired in by `agentgate setup`, and
// checks what really runs (docs/integrations.md, "What each agent really
// does").
//
// This file is the fake model: one HTTP server on 127.0.0.1 that speaks the
// three model APIs the agents use — Anthropic's Messages API
// (POST /v1/messages, server-sent events), Gemini's streamGenerateContent
// (POST /v1beta/models/MODEL:streamGenerateContent?alt=sse) and OpenAI's
// Responses API (POST /v1/responses, server-sent events). Whatever the
// agent asks, the model does one thing: it asks for one tool call (by
// default the agent's shell tool with Script.Command), then, once the
// request carries that call's result, it reports the result in a text
// answer and stops. The conversation state is read from each request, so a
// retried request gets the same answer.
package agente2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ResultPrefix starts the fake model's final answer, followed by the tool
// result it read.
const ResultPrefix = "TOOL RESULT: "

// Script is what the fake model asks for.
type Script struct {
	// Command is the shell command line the model asks the agent's shell
	// tool to run.
	Command string
	// Tool, when set, names another tool to call instead of the shell
	// (e.g. Claude Code's "mcp__agentgate__run_command"), with Args as its
	// input.
	Tool string
	// Args is the input of Tool.
	Args map[string]any
}

// Exchange is one request the fake model answered.
type Exchange struct {
	// API is "anthropic", "gemini" or "openai".
	API string
	// Path is the request path.
	Path string
	// Tools are the names of the tools the request offered.
	Tools []string
	// Called is the tool the model called in its answer ("" when it
	// answered with text).
	Called string
	// Result is the tool result the request carried, when it did.
	Result string
	// HasResult is true when the request carried a tool result.
	HasResult bool
}

// FakeModel is a running fake model server. Its methods are safe for
// concurrent use.
type FakeModel struct {
	// URL is the server's base URL (http://127.0.0.1:PORT), without a
	// trailing slash.
	URL string

	srv *http.Server
	ln  net.Listener

	mu sync.Mutex
	// script is what the model asks for; guarded by mu.
	script Script
	// log holds every exchange; guarded by mu.
	log []Exchange
	// unhandled counts requests for paths the fake does not serve; guarded
	// by mu.
	unhandled []string
}

// StartFakeModel starts a fake model server on a free loopback port.
func StartFakeModel(script Script) (*FakeModel, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fake model: listening on loopback: %w", err)
	}
	f := &FakeModel{URL: "http://" + ln.Addr().String(), ln: ln, script: script}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.srv.Serve(ln) }()
	return f, nil
}

// Close stops the server.
func (f *FakeModel) Close() error { return f.srv.Close() }

// SetScript replaces what the model asks for next.
func (f *FakeModel) SetScript(s Script) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = s
}

// Exchanges returns a copy of every exchange so far.
func (f *FakeModel) Exchanges() []Exchange {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Exchange(nil), f.log...)
}

// Unhandled returns the method and path of requests the fake did not serve.
func (f *FakeModel) Unhandled() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.unhandled...)
}

// ToolResults returns the tool results the model has read, in order.
func (f *FakeModel) ToolResults() []string {
	var out []string
	for _, e := range f.Exchanges() {
		if e.HasResult {
			out = append(out, e.Result)
		}
	}
	return out
}

// ToolCalls returns how many times the model asked for a tool.
func (f *FakeModel) ToolCalls() int {
	n := 0
	for _, e := range f.Exchanges() {
		if e.Called != "" {
			n++
		}
	}
	return n
}

func (f *FakeModel) record(e Exchange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, e)
}

func (f *FakeModel) currentScript() Script {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.script
}

func (f *FakeModel) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// One request per connection: a client keeping an idle connection
	// open would otherwise wait for it to time out before exiting.
	w.Header().Set("Connection", "close")
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 100})
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages"):
		f.serveAnthropic(w, path, body)
	case r.Method == http.MethodPost && strings.Contains(path, ":streamGenerateContent"):
		f.serveGemini(w, path, body, true)
	case r.Method == http.MethodPost && strings.Contains(path, ":generateContent"):
		f.serveGemini(w, path, body, false)
	case r.Method == http.MethodPost && strings.Contains(path, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 100})
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		f.serveOpenAI(w, path, body)
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		// Model listings: none beyond the configured one.
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	default:
		f.mu.Lock()
		f.unhandled = append(f.unhandled, r.Method+" "+r.URL.String())
		f.mu.Unlock()
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events; event "" writes data only.
type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

func (s sse) send(event string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	if event != "" {
		fmt.Fprintf(s.w, "event: %s\n", event)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if fl, ok := s.w.(http.Flusher); ok {
		fl.Flush()
	}
}

// textOf flattens a tool result's content (a string, or a list of blocks
// with text) into text.
func textOf(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, item := range c {
			parts = append(parts, textOf(item))
		}
		return strings.Join(parts, "\n")
	case map[string]any:
		for _, key := range []string{"text", "output", "content", "error", "llmContent"} {
			if inner, ok := c[key]; ok {
				return textOf(inner)
			}
		}
		b, _ := json.Marshal(c)
		return string(b)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// --- Anthropic Messages API -------------------------------------------------

// anthropicRequest is the part of a Messages API request the fake reads.
type anthropicRequest struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Model string `json:"model"`
}

func (f *FakeModel) serveAnthropic(w http.ResponseWriter, path string, body []byte) {
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ex := Exchange{API: "anthropic", Path: path}
	for _, t := range req.Tools {
		ex.Tools = append(ex.Tools, t.Name)
	}
	// The last user message carries the tool result, if any.
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "user" {
		var blocks []map[string]any
		if json.Unmarshal(req.Messages[n-1].Content, &blocks) == nil {
			for _, b := range blocks {
				if b["type"] == "tool_result" {
					ex.HasResult = true
					ex.Result = textOf(b["content"])
					if b["is_error"] == true {
						ex.Result = "[error] " + ex.Result
					}
				}
			}
		}
	}
	script := f.currentScript()
	tool, input := script.Tool, script.Args
	if tool == "" {
		tool, input = "Bash", map[string]any{"command": script.Command, "description": "Run the command the test asked for"}
	}
	offered := false
	for _, t := range ex.Tools {
		offered = offered || t == tool
	}
	text := ""
	switch {
	case ex.HasResult:
		text = ResultPrefix + ex.Result
	case !offered:
		// A side request (titles, summaries, checks): plain text.
		text = "ok"
	default:
		ex.Called = tool
	}
	f.record(ex)
	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	stop := "end_turn"
	var content []map[string]any
	if ex.Called != "" {
		stop = "tool_use"
		content = []map[string]any{{"type": "tool_use", "id": "toolu_fake_1", "name": tool, "input": input}}
	} else {
		content = []map[string]any{{"type": "text", "text": text}}
	}
	msgID := fmt.Sprintf("msg_fake_%d", time.Now().UnixNano())
	if !req.Stream {
		writeJSON(w, map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	s := newSSE(w)
	s.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	if ex.Called != "" {
		in, _ := json.Marshal(input)
		s.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_fake_1", "name": tool, "input": map[string]any{}}})
		s.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
	} else {
		s.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		s.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": text}})
	}
	s.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	s.send("message_stop", map[string]any{"type": "message_stop"})
}

// --- Gemini streamGenerateContent ------------------------------------------

// geminiRequest is the part of a generateContent request the fake reads.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string `json:"text"`
			FunctionResponse *struct {
				Name     string `json:"name"`
				Response any    `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType string `json:"responseMimeType"`
	} `json:"generationConfig"`
}

func (f *FakeModel) serveGemini(w http.ResponseWriter, path string, body []byte, stream bool) {
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ex := Exchange{API: "gemini", Path: path}
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			ex.Tools = append(ex.Tools, d.Name)
		}
	}
	if n := len(req.Contents); n > 0 && req.Contents[n-1].Role == "user" {
		for _, p := range req.Contents[n-1].Parts {
			if p.FunctionResponse != nil {
				ex.HasResult = true
				ex.Result = textOf(p.FunctionResponse.Response)
			}
		}
	}
	script := f.currentScript()
	tool, args := script.Tool, script.Args
	if tool == "" {
		tool, args = "run_shell_command", map[string]any{"command": script.Command, "description": "Run the command the test asked for"}
	}
	offered := false
	for _, t := range ex.Tools {
		offered = offered || t == tool
	}
	var part map[string]any
	switch {
	case ex.HasResult:
		part = map[string]any{"text": ResultPrefix + ex.Result}
	case req.GenerationConfig.ResponseMimeType == "application/json":
		// A side request wanting JSON (routing, next-speaker checks): an
		// answer that ends the turn.
		part = map[string]any{"text": `{"reasoning":"fake","next_speaker":"user","model_choice":"flash","complexity_reasoning":"fake","complexity_score":1}`}
	case !offered:
		part = map[string]any{"text": "ok"}
	default:
		ex.Called = tool
		part = map[string]any{"functionCall": map[string]any{"name": tool, "args": args}}
	}
	f.record(ex)
	chunk := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-fake",
	}
	if !stream {
		writeJSON(w, chunk)
		return
	}
	newSSE(w).send("", chunk)
}

// --- OpenAI Responses API ---------------------------------------------------

// openAIRequest is the part of a Responses API request the fake reads.
type openAIRequest struct {
	Model string            `json:"model"`
	Input []json.RawMessage `json:"input"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

// openAIShellTools are Codex's shell tools, most preferred first, with how
// each takes the command line.
var openAIShellTools = []struct {
	name string
	args func(command string) map[string]any
}{
	{"shell_command", func(c string) map[string]any { return map[string]any{"command": c} }},
	{"exec_command", func(c string) map[string]any { return map[string]any{"cmd": c} }},
	{"shell", func(c string) map[string]any { return map[string]any{"command": []string{"bash", "-lc", c}} }},
}

func (f *FakeModel) serveOpenAI(w http.ResponseWriter, path string, body []byte) {
	var req openAIRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ex := Exchange{API: "openai", Path: path}
	for _, t := range req.Tools {
		name := t.Name
		if name == "" {
			name = t.Type
		}
		ex.Tools = append(ex.Tools, name)
	}
	if n := len(req.Input); n > 0 {
		var last map[string]any
		if json.Unmarshal(req.Input[n-1], &last) == nil && (last["type"] == "function_call_output" || last["type"] == "custom_tool_call_output") {
			ex.HasResult = true
			ex.Result = textOf(last["output"])
		}
	}
	script := f.currentScript()
	tool, args := script.Tool, script.Args
	if tool == "" {
		for _, st := range openAIShellTools {
			for _, offered := range ex.Tools {
				if offered == st.name && tool == "" {
					tool, args = st.name, st.args(script.Command)
				}
			}
		}
	}
	offered := false
	for _, t := range ex.Tools {
		offered = offered || (tool != "" && t == tool)
	}
	respID := fmt.Sprintf("resp_fake_%d", time.Now().UnixNano())
	var item map[string]any
	switch {
	case ex.HasResult || !offered:
		text := "ok"
		if ex.HasResult {
			text = ResultPrefix + ex.Result
		}
		item = map[string]any{"type": "message", "id": "msg_fake_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	default:
		ex.Called = tool
		a, _ := json.Marshal(args)
		item = map[string]any{"type": "function_call", "id": "fc_fake_1", "call_id": fmt.Sprintf("call_fake_%d", time.Now().UnixNano()),
			"name": tool, "arguments": string(a), "status": "completed"}
	}
	f.record(ex)
	s := newSSE(w)
	s.send("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": respID, "object": "response", "status": "in_progress", "model": req.Model}})
	s.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	s.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	s.send("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": respID, "object": "response", "status": "completed", "model": req.Model, "output": []any{item},
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}})
}
