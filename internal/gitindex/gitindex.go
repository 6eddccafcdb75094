// Package gitindex reads git's index (versions 2, 3 and 4, its extensions,
// a split index's link to its shared index) and checks every path it
// lists the way git checks a path it takes from a tree (read-cache.c's
// verify_path, with core.protectHFS and core.protectNTFS both on), so that
// an index written by someone else can be refused before git obeys it: git
// writes into the working tree whatever its index lists, without those
// checks (ADR 0038). An index that cannot be read as git would read it is
// refused.
package gitindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Hash sizes: the object formats git knows.
const (
	SHA1   = 20
	SHA256 = 32
)

// Modes git gives entries (the type bits of st_mode).
const (
	modeType    = 0o170000
	ModeSymlink = 0o120000
	ModeDir     = 0o040000 // a sparse directory entry
)

// An Entry is a path an index lists, with its mode and object ID (raw).
type Entry struct {
	Path string
	Mode uint32
	ID   string
}

// Index is what a check reads from an index.
type Index struct {
	Version uint32
	// Entries are the index entries (of a split index, once merged with
	// its shared index: Merge).
	Entries []Entry
	// Undo are the resolve-undo extension's entries, which git checkout
	// -m puts back as conflicts.
	Undo []Entry
	// Shared is the hex hash of the shared index a split index names
	// (sharedindex.<Shared> beside it); "" for none. deleted and replaced
	// are its bitmaps' bits: positions in the shared index.
	Shared            string
	deleted, replaced []int
}

const (
	headerSize   = 12
	entryFixed   = 40 // ctime .. size, before the object ID
	flagExtended = 0x4000
	nameMask     = 0x0fff
	// The extended flags git knows (CE_EXTENDED_FLAGS): intent-to-add and
	// skip-worktree; any other bit makes git die.
	extendedKnown = 0x6000
)

// Parse reads an index of the object format whose hashes are hashSize
// bytes, as git reads it: entries in order, then the extensions. Where git
// can also read it another way (threads reading blocks an offset table
// names, extensions found from an end-of-entries record), the other way
// must find the same entries, or the index is refused.
func Parse(data []byte, hashSize int) (*Index, error) {
	if hashSize != SHA1 && hashSize != SHA256 {
		return nil, fmt.Errorf("hash size %d is no object format's", hashSize)
	}
	if len(data) < headerSize+hashSize {
		return nil, errors.New("smaller than an index")
	}
	if string(data[:4]) != "DIRC" {
		return nil, errors.New("no index signature")
	}
	ix := &Index{Version: binary.BigEndian.Uint32(data[4:])}
	if ix.Version < 2 || ix.Version > 4 {
		return nil, fmt.Errorf("index version %d", ix.Version)
	}
	r := reader{data: data, hashSize: hashSize, version: ix.Version}
	count := binary.BigEndian.Uint32(data[8:])
	offsets, err := r.entries(ix, count)
	if err != nil {
		return nil, err
	}
	if err := r.extensions(ix, offsets); err != nil {
		return nil, err
	}
	return ix, nil
}

type reader struct {
	data     []byte
	hashSize int
	version  uint32
	end      int // where the entries end
	// blockSafe is, per entry, whether a reader starting a block there
	// (with no previous name) reads the name read in order.
	blockSafe []bool
}

// entries reads count entries from the header on and returns the offset
// of each.
func (r *reader) entries(ix *Index, count uint32) ([]int, error) {
	if int64(count) > int64(len(r.data)/(entryFixed+r.hashSize+2)) {
		return nil, fmt.Errorf("%d entries cannot fit", count)
	}
	ix.Entries = make([]Entry, 0, count)
	offsets := make([]int, 0, count+1)
	r.blockSafe = make([]bool, 0, count)
	off := headerSize
	var prev []byte
	for i := uint32(0); i < count; i++ {
		offsets = append(offsets, off)
		name, size, safe, err := r.entry(off, prev, i == 0)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		mode := binary.BigEndian.Uint32(r.data[off+24:])
		id := string(r.data[off+entryFixed : off+entryFixed+r.hashSize])
		ix.Entries = append(ix.Entries, Entry{Path: string(name), Mode: mode, ID: id})
		r.blockSafe = append(r.blockSafe, safe)
		prev = name
		off += size
	}
	offsets = append(offsets, off)
	r.end = off
	return offsets, nil
}

// entry reads the entry at off, whose previous entry's name is prev, and
// returns its name and its size on disk. safe reports that a reader
// starting at this entry, with no previous name, reads the same name.
func (r *reader) entry(off int, prev []byte, first bool) (name []byte, size int, safe bool, err error) {
	d := r.data
	flagsAt := off + entryFixed + r.hashSize
	if flagsAt+2 > len(d)-r.hashSize {
		return nil, 0, false, errors.New("runs past the end")
	}
	flags := int(binary.BigEndian.Uint16(d[flagsAt:]))
	nameAt := flagsAt + 2
	if flags&flagExtended != 0 {
		if nameAt+2 > len(d)-r.hashSize {
			return nil, 0, false, errors.New("runs past the end")
		}
		ext := int(binary.BigEndian.Uint16(d[nameAt:])) << 16
		if ext&^(extendedKnown<<16) != 0 {
			return nil, 0, false, fmt.Errorf("unknown extended flags %#x", ext)
		}
		nameAt += 2
	}
	length := flags & nameMask
	if r.version != 4 {
		if length == nameMask {
			length = bytes.IndexByte(d[min(nameAt, len(d)):], 0)
			if length < 0 {
				return nil, 0, false, errors.New("name runs past the end")
			}
		}
		if nameAt+length >= len(d)-r.hashSize {
			return nil, 0, false, errors.New("name runs past the end")
		}
		name = d[nameAt : nameAt+length]
		if d[nameAt+length] != 0 || bytes.IndexByte(name, 0) >= 0 {
			return nil, 0, false, errors.New("name not ended by its NUL")
		}
		// git's entries are padded to eight bytes with one to eight NULs.
		size = (nameAt - off + length + 8) &^ 7
		return name, size, true, nil
	}
	return r.entryV4(nameAt, off, length, prev, first)
}

// entryV4 reads a version 4 entry's name: a varint of how many bytes to
// strip from the end of the previous name, and the rest, ended by a NUL.
func (r *reader) entryV4(at, off, length int, prev []byte, first bool) (name []byte, size int, safe bool, err error) {
	d := r.data
	strip, n := varint(d[at : len(d)-r.hashSize])
	if n <= 0 {
		return nil, 0, false, errors.New("bad name prefix")
	}
	at += n
	// git ignores the strip count of the first entry (and of a block's
	// first, read with no previous name).
	keep := 0
	if !first {
		if strip > uint64(len(prev)) {
			return nil, 0, false, errors.New("strips more than the previous name")
		}
		keep = len(prev) - int(strip)
	}
	rest := bytes.IndexByte(d[at:len(d)-r.hashSize], 0)
	if rest < 0 {
		return nil, 0, false, errors.New("name runs past the end")
	}
	if length != nameMask {
		// git takes the length from the flags and the byte after it as
		// the name's end: they must be the name and its NUL.
		if length < keep || length-keep != rest {
			return nil, 0, false, errors.New("name length disagrees with its NUL")
		}
	}
	name = make([]byte, 0, keep+rest)
	name = append(append(name, prev[:keep]...), d[at:at+rest]...)
	return name, at + rest + 1 - off, keep == 0, nil
}

// varint is git's varint (varint.c): seven bits a byte, most significant
// first, each continuation adding one.
func varint(b []byte) (uint64, int) {
	var val uint64
	for i, c := range b {
		if i == 0 {
			val = uint64(c & 0x7f)
		} else {
			if val+1 == 0 || (val+1)>>57 != 0 {
				return 0, -1
			}
			val = ((val + 1) << 7) | uint64(c&0x7f)
		}
		if c&0x80 == 0 {
			return val, i + 1
		}
	}
	return 0, -1
}

// Merge makes a split index's entries what git makes of them with its
// shared index, base (read-cache.c's merge_base_index): the shared
// index's entries, the first of the split index's replacing those its
// replace bitmap names (keeping their names), those its delete bitmap
// names removed, and the rest of its entries added. What makes git die is
// an error.
func (ix *Index) Merge(base *Index) error {
	if ix.Shared == "" || base.Shared != "" {
		return errors.New("not a split index and its shared index")
	}
	merged := append([]Entry(nil), base.Entries...)
	gone := make([]bool, len(merged))
	if len(ix.replaced) > len(ix.Entries) {
		return errors.New("more replacements than entries")
	}
	for i, pos := range ix.replaced {
		if pos >= len(merged) || ix.Entries[i].Path != "" {
			return errors.New("corrupt link extension")
		}
		merged[pos] = Entry{Path: merged[pos].Path, Mode: ix.Entries[i].Mode, ID: ix.Entries[i].ID}
	}
	for _, pos := range ix.deleted {
		if pos >= len(merged) {
			return errors.New("corrupt link extension")
		}
		gone[pos] = true
	}
	out := merged[:0]
	for i, e := range merged {
		if !gone[i] {
			out = append(out, e)
		}
	}
	for _, e := range ix.Entries[len(ix.replaced):] {
		if e.Path == "" {
			return errors.New("corrupt link extension: a new entry without a name")
		}
		out = append(out, e)
	}
	ix.Entries = out
	return nil
}

// Verify checks every entry and resolve-undo entry: git must accept its
// path (VerifyPath) and refused, given it, must say nothing ("" for an
// entry the caller allows). A split index is verified once merged.
func (ix *Index) Verify(refused func(Entry) string) error {
	for _, list := range [][]Entry{ix.Entries, ix.Undo} {
		for _, e := range list {
			if !VerifyPath(e.Path, e.Mode) {
				return fmt.Errorf("lists %q, a path git refuses to check out", e.Path)
			}
			if refused != nil {
				if why := refused(e); why != "" {
					return fmt.Errorf("lists %q: %s", e.Path, why)
				}
			}
		}
	}
	return nil
}
