// Checks on the repository's documents.
package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideRecords matches references to specifications, design records and
// trackers that are not in the repository: a reader of the documents cannot
// follow them.
var outsideRecords = regexp.MustCompile(`\bSPEC\b|SPEC\.md|\bADR-?\d|design card|design record|/work/shared|\bissue #\d`)

// TestDocumentsCiteNothingOutsideTheRepository: no Markdown document of the
// repository refers to a specification or design record it does not hold.
func TestDocumentsCiteNothingOutsideTheRepository(t *testing.T) {
	root, err := filepath.Abs(filepath.Join(".."))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for i, line := range strings.Split(string(data), "\n") {
			if m := outsideRecords.FindString(line); m != "" {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d cites %q, which is not in the repository: say what it means instead\n\t%s", rel, i+1, m, line)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 5 {
		t.Fatalf("only %d documents found under %s", checked, root)
	}
}
