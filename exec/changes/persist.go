package changes

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/agentgate/agentgate/exec/atomicfile"
)

// indexMagic starts an index file; the digit is the format's version.
const indexMagic = "agentgate change index 1\n"

// Entry flags in an index file.
const (
	flagHashed = 1 << iota
	flagRacy
)

// saveIndex writes idx of root to file atomically (temporary file in the
// same directory, fsync, rename).
func saveIndex(file, root string, idx *index) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 256<<10)
	enc := encoder{w: w}
	enc.str(indexMagic)
	enc.str(root)
	dirs := make([]string, 0, len(idx.dirs))
	for rel := range idx.dirs {
		dirs = append(dirs, rel)
	}
	sort.Strings(dirs)
	enc.uint(uint64(len(dirs)))
	for _, rel := range dirs {
		n := idx.dirs[rel]
		enc.str(rel)
		enc.str(n.skipped)
		enc.uint(uint64(len(n.entries)))
		for name, e := range n.entries {
			enc.str(name)
			enc.uint(uint64(e.mode))
			enc.int(e.size)
			enc.int(e.mtime)
			enc.int(e.ctime)
			enc.uint(e.ino)
			var flags uint64
			if e.hashed {
				flags |= flagHashed
			}
			if e.racy {
				flags |= flagRacy
			}
			enc.uint(flags)
			if e.hashed {
				enc.bytes(e.hash[:])
			}
		}
	}
	if err := errors.Join(enc.err, w.Flush()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return atomicfile.Rename(tmp.Name(), file)
}

// loadIndex reads the index of root from file; fs.ErrNotExist when there
// is none, an error when it is damaged or of another root.
func loadIndex(file, root string) (index, map[string]string, error) {
	f, err := atomicfile.Open(file)
	if err != nil {
		return index{}, nil, err
	}
	defer f.Close()
	dec := decoder{r: bufio.NewReaderSize(f, 256<<10)}
	if dec.str() != indexMagic || dec.str() != root {
		return index{}, nil, fmt.Errorf("%s is not an index of %s in this format", file, root)
	}
	idx := index{dirs: map[string]*dirNode{}}
	skipped := map[string]string{}
	ndirs := dec.uint()
	for i := uint64(0); i < ndirs && dec.err == nil; i++ {
		rel := dec.str()
		n := &dirNode{skipped: dec.str(), wd: -1}
		count := dec.uint()
		n.entries = make(map[string]*entry, min(count, 1<<16))
		for j := uint64(0); j < count && dec.err == nil; j++ {
			name := dec.str()
			e := &entry{mode: fs.FileMode(dec.uint()), size: dec.int(), mtime: dec.int(), ctime: dec.int(), ino: dec.uint()}
			flags := dec.uint()
			e.racy = flags&flagRacy != 0
			if flags&flagHashed != 0 {
				e.hashed = true
				dec.bytes(e.hash[:])
			}
			n.entries[name] = e
		}
		idx.dirs[rel] = n
		idx.count += len(n.entries)
		if n.skipped != "" {
			skipped[rel] = n.skipped
		}
	}
	if dec.err != nil {
		return index{}, nil, fmt.Errorf("%s is damaged: %w", file, dec.err)
	}
	if idx.dirs[""] == nil {
		return index{}, nil, fmt.Errorf("%s has no root", file)
	}
	return idx, skipped, nil
}

// encoder writes varints and length-prefixed strings, keeping the first
// error.
type encoder struct {
	// w is the destination.
	w *bufio.Writer
	// err is the first write error.
	err error
	// buf is scratch space for a varint.
	buf [binary.MaxVarintLen64]byte
}

func (e *encoder) uint(v uint64) {
	if e.err == nil {
		_, e.err = e.w.Write(e.buf[:binary.PutUvarint(e.buf[:], v)])
	}
}

func (e *encoder) int(v int64) {
	if e.err == nil {
		_, e.err = e.w.Write(e.buf[:binary.PutVarint(e.buf[:], v)])
	}
}

func (e *encoder) str(s string) {
	e.uint(uint64(len(s)))
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

func (e *encoder) bytes(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

// decoder reads what encoder wrote, keeping the first error.
type decoder struct {
	// r is the source.
	r *bufio.Reader
	// err is the first read error.
	err error
}

// maxString bounds one string in an index file (a path).
const maxString = 1 << 16

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	d.err = err
	return v
}

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(d.r)
	d.err = err
	return v
}

func (d *decoder) str() string {
	n := d.uint()
	if d.err != nil {
		return ""
	}
	if n > maxString {
		d.err = errors.New("a string is too long")
		return ""
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.err = err
	}
	return string(b)
}

func (d *decoder) bytes(b []byte) {
	if d.err == nil {
		_, d.err = io.ReadFull(d.r, b)
	}
}
