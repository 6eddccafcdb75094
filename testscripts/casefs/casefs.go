// Package casefs is a file system that ignores case and keeps it: a FUSE
// passthrough of a directory that finds a name in any case, as Docker
// Desktop's shares of a macOS or Windows folder do. The live tests put a
// workspace on it (ADR 0033); only the tests link it.
//
// Each node knows the path of its file in the directory passed through
// (a directory is the root of a loopback of its own), so a name found in
// another case leads to the file's real path. What the tests need works: lookups,
// reads, writes, truncating, creating and removing names, renames (a file
// renamed is found at its new path). Hard links fail with EXDEV, a file's
// times are not set, and a directory renamed keeps its old path.
package casefs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// A node is a loopback node whose directory entries are found in any
// case. Creating a name needs no folding: the kernel looks it up first,
// and makes it only when no entry of any case answered.
type node struct{ *fs.LoopbackNode }

// newNode makes the node of the directory at path.
func newNode(path string, dev uint64) *node {
	r := &fs.LoopbackRoot{Path: path, Dev: dev}
	n := &node{&fs.LoopbackNode{RootData: r}}
	r.RootNode = n
	r.NewNode = func(parent *fs.LoopbackRoot, _ *fs.Inode, name string, st *syscall.Stat_t) fs.InodeEmbedder {
		if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			return newNode(filepath.Join(parent.Path, name), dev)
		}
		return &file{LoopbackNode: &fs.LoopbackNode{RootData: parent}, path: filepath.Join(parent.Path, name)}
	}
	return n
}

// A file is any node but a directory, reached by its real path whatever
// name the kernel asked for.
type file struct {
	*fs.LoopbackNode
	path string // where it was found
}

// realPath is where the file is now: a rename moves the node to another
// name (git renames index.lock over index), so the path is its name, as
// its directory finds it, in its directory.
func (f *file) realPath() string {
	name, parent := f.Parent()
	if d, ok := parent.Operations().(*node); parent != nil && ok {
		return filepath.Join(d.RootData.Path, d.entry(name))
	}
	return f.path
}

func (f *file) Open(_ context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fd, err := syscall.Open(f.realPath(), int(flags&^(syscall.O_APPEND|fuse.FMODE_EXEC))|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, 0, fs.ToErrno(err)
	}
	return fs.NewLoopbackFile(fd), 0, 0
}

func (f *file) Getattr(_ context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	var st syscall.Stat_t
	if err := syscall.Lstat(f.realPath(), &st); err != nil {
		return fs.ToErrno(err)
	}
	out.FromStat(&st)
	return 0
}

func (f *file) Setattr(ctx context.Context, _ fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok {
		if err := syscall.Truncate(f.realPath(), int64(size)); err != nil {
			return fs.ToErrno(err)
		}
	}
	if mode, ok := in.GetMode(); ok {
		if err := syscall.Chmod(f.realPath(), mode); err != nil {
			return fs.ToErrno(err)
		}
	}
	uid, gid := -1, -1
	if u, ok := in.GetUID(); ok {
		uid = int(u)
	}
	if g, ok := in.GetGID(); ok {
		gid = int(g)
	}
	if uid != -1 || gid != -1 {
		if err := syscall.Lchown(f.realPath(), uid, gid); err != nil {
			return fs.ToErrno(err)
		}
	}
	return f.Getattr(ctx, nil, out)
}

func (f *file) Readlink(context.Context) ([]byte, syscall.Errno) {
	target, err := os.Readlink(f.realPath())
	return []byte(target), fs.ToErrno(err)
}

// entry is the name of the entry of n that name finds: name itself, or
// else an entry that differs from it only in case.
func (n *node) entry(name string) string {
	dir := n.RootData.Path
	if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
		return name
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.EqualFold(e.Name(), name) {
			return e.Name()
		}
	}
	return name
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.LoopbackNode.Lookup(ctx, n.entry(name), out)
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.LoopbackNode.Unlink(ctx, n.entry(name))
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.LoopbackNode.Rmdir(ctx, n.entry(name))
}

func (n *node) Rename(_ context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	p, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(n.RootData.Path, n.entry(name)), unix.AT_FDCWD, filepath.Join(p.RootData.Path, p.entry(newName)), uint(flags))
	return fs.ToErrno(err)
}

// Mount mounts the directory back at mnt for every user, with the
// kernel checking permissions, as root, without fusermount. Nothing is
// cached, so every lookup reaches the file system.
func Mount(back, mnt string) (*fuse.Server, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(back, &st); err != nil {
		return nil, err
	}
	var never time.Duration
	return fs.Mount(mnt, newNode(back, uint64(st.Dev)), &fs.Options{
		EntryTimeout:    &never,
		AttrTimeout:     &never,
		NegativeTimeout: &never,
		MountOptions: fuse.MountOptions{
			AllowOther:        true,
			Options:           []string{"default_permissions"},
			DirectMountStrict: true,
			FsName:            back,
			Name:              "casefs",
		},
	})
}
