package prefs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentgate/agentgate/exec/atomicfile"
)

// trustName is the file name, under Paths.StateDir, of the project trust
// state.
const trustName = "trust.json"

// trustFileVersion is the format version written to trust.json.
const trustFileVersion = 1

// trustFile is the content of trust.json: for each project root, the SHA-256
// of every rule a person confirmed there. A project rule is active exactly
// when the hash of its normalised line, FormatList(tokens), is in its
// project's set; so an outside change deactivates only the rules it added or
// altered, and removing a rule just removes its permission.
type trustFile struct {
	// Version is trustFileVersion.
	Version int `json:"version"`
	// Projects maps an absolute, cleaned project root to what was confirmed.
	Projects map[string]trustedProject `json:"projects"`
}

// trustedProject is what a person confirmed in one project.
type trustedProject struct {
	// Rules holds the hex SHA-256 of each confirmed rule's normalised line,
	// sorted and without duplicates.
	Rules []string `json:"rules"`
}

// trustSet is the set of confirmed rule hashes of each project root.
type trustSet map[string]map[string]bool

// ruleHash returns the hex SHA-256 of the normalised line of tokens.
func ruleHash(tokens []string) string {
	sum := sha256.Sum256([]byte(FormatList(tokens)))
	return hex.EncodeToString(sum[:])
}

// readTrust reads trust.json from p's state directory; a missing file means
// nothing is trusted. A malformed file is an error naming it.
func readTrust(p Paths) (trustSet, error) {
	path := p.trustFile()
	data, err := atomicfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return trustSet{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading project trust from %s: %w", path, err)
	}
	var tf trustFile
	if err := json.Unmarshal(data, &tf); err != nil {
		return nil, fmt.Errorf("project trust file %s is damaged (%v): fix or delete it; after deleting, every project rule needs confirming again", path, err)
	}
	if tf.Version != trustFileVersion {
		return nil, fmt.Errorf("project trust file %s has version %d, this agentgate reads version %d: update agentgate or delete the file", path, tf.Version, trustFileVersion)
	}
	set := trustSet{}
	for root, project := range tf.Projects {
		hashes := make(map[string]bool, len(project.Rules))
		for _, h := range project.Rules {
			hashes[h] = true
		}
		set[root] = hashes
	}
	return set, nil
}

// updateTrust changes the confirmed rules of the project at root under a
// cross-process lock: it re-reads trust.json, lets change edit the project's
// hash set (created empty when absent) and writes the file atomically with
// mode 0600.
func updateTrust(p Paths, root string, change func(hashes map[string]bool)) error {
	if err := os.MkdirAll(p.StateDir, 0o700); err != nil {
		return fmt.Errorf("creating the state directory %s: %w", p.StateDir, err)
	}
	unlock, err := lockBeside(p.trustFile())
	if err != nil {
		return err
	}
	defer unlock()
	set, err := readTrust(p)
	if err != nil {
		return err
	}
	hashes := set[root]
	if hashes == nil {
		hashes = map[string]bool{}
	}
	change(hashes)
	tf := trustFile{Version: trustFileVersion, Projects: map[string]trustedProject{}}
	set[root] = hashes
	for r, h := range set {
		if len(h) == 0 {
			continue
		}
		list := make([]string, 0, len(h))
		for hash := range h {
			list = append(list, hash)
		}
		slices.Sort(list)
		tf.Projects[r] = trustedProject{Rules: list}
	}
	data, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding project trust: %w", err)
	}
	return WriteFileAtomic(p.trustFile(), append(data, '\n'), 0o600)
}

// cleanRoot returns the key under which a project root is stored: absolute
// and cleaned. ok is false for an empty or relative root.
func cleanRoot(root string) (string, bool) {
	if root == "" || !filepath.IsAbs(root) {
		return "", false
	}
	return filepath.Clean(root), true
}
