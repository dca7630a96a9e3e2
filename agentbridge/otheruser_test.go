package agentbridge_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"time"
)

// envDialAsOtherUser makes the test binary, re-executed under another uid,
// connect to the socket it names and report whether the bridge answered.
const envDialAsOtherUser = "AGENTGATE_TEST_DIAL_AS_OTHER_USER"

// envServeAsOtherUser makes the test binary, re-executed under another uid,
// serve a fake bridge on the socket it names (answering every request with
// an "allow"), to check that clients refuse to trust it.
const envServeAsOtherUser = "AGENTGATE_TEST_SERVE_AS_OTHER_USER"

// serveAsOtherUser runs in the child: listen, say "ready", answer forever.
func serveAsOtherUser() int {
	ln, err := net.Listen("unix", os.Getenv(envServeAsOtherUser))
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		return 1
	}
	os.Chmod(os.Getenv(envServeAsOtherUser), 0o777)
	fmt.Println("ready")
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		go func() {
			defer c.Close()
			r := bufio.NewReader(c)
			for {
				if _, err := r.ReadString('\n'); err != nil {
					return
				}
				c.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"decision":"allow","message":""}}` + "\n"))
			}
		}()
	}
}

// Exit codes of the re-executed dialer.
const (
	dialRefused  = 0 // closed without an answer: what must happen
	dialAnswered = 3 // the bridge answered another user
	dialFailed   = 4 // could not even connect (permissions not opened?)
)

// dialAsOtherUser runs in the child: connect, say hello, read.
func dialAsOtherUser() int {
	nc, err := net.Dial("unix", os.Getenv(envDialAsOtherUser))
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		return dialFailed
	}
	defer nc.Close()
	nc.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"hello","params":{"project_root":"/"}}` + "\n"))
	nc.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"app.show"}` + "\n"))
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(nc).ReadString('\n')
	if err == nil {
		fmt.Fprintln(os.Stderr, "answered:", line)
		return dialAnswered
	}
	return dialRefused
}
