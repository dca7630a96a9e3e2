// Package shimbuild builds the confinement shim (cmd/agentgate-shim) for
// tests, which need it but cannot rely on `make build` having run. The
// binary is cached under ${XDG_CACHE_HOME:-~/.cache}/agentgate-test/, named
// by the hash of its source, so each test package builds it at most once
// per change of shim.c.
package shimbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

// Source returns the path of cmd/agentgate-shim/shim.c in this checkout.
func Source() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the source tree")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "cmd", "agentgate-shim", "shim.c"), nil
}

// Env names the environment variable that gives tests a shim built
// elsewhere (unixpg/asuser passes its copy this way).
const Env = "AGENTGATE_TEST_SHIM"

// Path returns the built shim: $AGENTGATE_TEST_SHIM when set, else a build
// with the C compiler (Compiler) as a static binary, from the cache when
// it has this source's build. It fails when there is no C compiler; tests
// then skip with that reason.
var Path = sync.OnceValues(build)

// Compiler returns the C compiler the shim is built with, as `make build`
// chooses it: $CC when set, else musl-gcc when installed (a static musl
// program starts in a tenth of the time a static glibc one takes: the shim
// runs before every confined run's program), else cc.
func Compiler() string {
	if cc := os.Getenv("CC"); cc != "" {
		return cc
	}
	if _, err := exec.LookPath("musl-gcc"); err == nil {
		return "musl-gcc"
	}
	return "cc"
}

// build compiles shim.c into the cache.
func build() (string, error) {
	if p := os.Getenv(Env); p != "" {
		return p, nil
	}
	if runtime.GOOS != "linux" {
		return "", errors.New("the confinement shim is Linux-only")
	}
	src, err := Source()
	if err != nil {
		return "", err
	}
	code, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("reading the shim's source: %w", err)
	}
	cc := Compiler()
	sum := sha256.Sum256(append([]byte(cc+"\n"), code...))
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "agentgate-test")
	out := filepath.Join(dir, "agentgate-shim-"+hex.EncodeToString(sum[:8]))
	if fi, err := os.Stat(out); err == nil && fi.Mode().IsRegular() {
		return out, nil
	}
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Errorf("no C compiler (%s) to build the confinement shim: %w", cc, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".shim-*")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if b, err := exec.Command(cc, "-static", "-O2", "-Wall", "-o", tmp.Name(), src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the confinement shim: %v\n%s", err, b)
	}
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", err
	}
	return out, nil
}
