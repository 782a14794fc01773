#!/usr/bin/python3
# A FUSE file system that loses what was not synced when it is killed: the power-cut tests' disk
# (issue 35). Usage: lazy-fs.py <disk-dir> <mountpoint>   (runs in the foreground; Debian's
# python3-fusepy, as root).
#
# The model. <disk-dir> is the disk; this process's memory is the page cache.
# - Every file's current bytes live in memory. A write changes only them. fsync/fdatasync of a
#   file (or any write through a descriptor opened O_DSYNC/O_SYNC, which Linux syncs per write)
#   makes the file's *data and size* durable — not any name it has.
# - Every directory's current entries live in memory. Creating, renaming and unlinking change only
#   them. fsync of a directory makes its entries as they are at that moment durable: names added
#   point at their files' durable bytes, names gone are gone. Nothing else persists a name — not
#   fsync of the file, not a rename (no ext4 journal ordering is assumed: POSIX promises none).
# - <disk-dir> always holds exactly the durable state: each sync writes it through, so a file
#   reachable from the root by durable entries is there with its durable bytes, nothing else is.
# - A power cut is SIGKILL of this process (then a lazy unmount): memory is gone. The next
#   process mounts <disk-dir> as it is. Test harness: packages/server/test/support/lazy-fs.ts.
# Locks (LevelDB's LOCK) are not implemented here, so the kernel keeps them locally on the mount.
# Single-threaded (-s): one operation at a time, no locking needed.
import errno
import os
import shutil
import stat
import sys
import time

from fusepy import FUSE, FuseOSError

SYNC_FLAGS = os.O_DSYNC | getattr(os, 'O_SYNC', 0)


class Node:
    __slots__ = ('is_dir', 'data', 'durable', 'lo', 'hi', 'children', 'dchildren', 'mode', 'mtime')

    def __init__(self, is_dir, mode, content=b''):
        self.is_dir = is_dir
        self.mode = mode
        self.mtime = time.time_ns()
        # Files: current bytes, durable bytes, and the span [lo, hi) where they may differ.
        self.data = bytearray(content)
        self.durable = bytearray(content)
        self.lo = None
        self.hi = 0
        # Directories: current entries and durable entries, name -> inode number.
        self.children = {}
        self.dchildren = {}

    def touch(self, lo, hi):
        self.lo = lo if self.lo is None else min(self.lo, lo)
        self.hi = max(self.hi, hi)
        self.mtime = time.time_ns()


class LazyFS:
    use_ns = True
    # Operations on an open file get its handle, not its path (an unlinked file stays usable).
    flag_nullpath_ok = 1
    flag_nopath = 1

    def __init__(self, disk):
        self.disk = disk
        self.nodes = {}
        self.next_ino = 1
        self.handles = {}  # handle -> (inode, synced per write)
        self.next_fh = 1
        self.paths_cache = None
        self.churn = 0
        self.root = self.load(disk)

    # --- memory and disk -------------------------------------------------------------------
    def add(self, node):
        ino = self.next_ino
        self.next_ino += 1
        self.nodes[ino] = node
        return ino

    def load(self, path):
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode):
            node = Node(True, stat.S_IMODE(st.st_mode))
            ino = self.add(node)
            for name in os.listdir(path):
                child = self.load(os.path.join(path, name))
                node.children[name] = child
                node.dchildren[name] = child
            return ino
        with open(path, 'rb') as f:
            return self.add(Node(False, stat.S_IMODE(st.st_mode), f.read()))

    def durable_paths(self):
        """inode -> its paths on the disk: every path from the root through durable entries."""
        if self.paths_cache is None:
            paths = {}
            stack = [(self.root, self.disk)]
            while stack:
                ino, path = stack.pop()
                paths.setdefault(ino, []).append(path)
                node = self.nodes[ino]
                if node.is_dir:
                    for name, child in node.dchildren.items():
                        stack.append((child, os.path.join(path, name)))
            self.paths_cache = paths
        return self.paths_cache

    def materialize(self, ino, path):
        """Write inode's durable state (for a directory: its durable subtree) at `path` on the disk."""
        node = self.nodes[ino]
        if node.is_dir:
            os.mkdir(path, node.mode | 0o700)
            for name, child in node.dchildren.items():
                self.materialize(child, os.path.join(path, name))
        else:
            with open(path, 'wb') as f:
                f.write(node.durable)

    def sync_file(self, ino):
        node = self.nodes[ino]
        if node.lo is None:
            return
        size = len(node.data)
        lo, hi = min(node.lo, size), min(node.hi, size)
        d = node.durable
        if len(d) > size:
            del d[size:]
        elif len(d) < size:
            d.extend(bytes(size - len(d)))
        d[lo:hi] = node.data[lo:hi]
        node.lo, node.hi = None, 0
        for path in self.durable_paths().get(ino, ()):
            fd = os.open(path, os.O_WRONLY)
            try:
                os.pwrite(fd, d[lo:hi], lo)
                os.ftruncate(fd, size)
            finally:
                os.close(fd)

    def sync_dir(self, ino):
        node = self.nodes[ino]
        if node.children == node.dchildren:
            return
        for path in self.durable_paths().get(ino, ()):
            for name, child in node.dchildren.items():
                if node.children.get(name) != child:
                    gone = os.path.join(path, name)
                    if os.path.isdir(gone) and not os.path.islink(gone):
                        shutil.rmtree(gone)
                    else:
                        os.unlink(gone)
            for name, child in node.children.items():
                if node.dchildren.get(name) != child:
                    self.materialize(child, os.path.join(path, name))
        node.dchildren = dict(node.children)
        self.paths_cache = None

    def collect(self):
        """Forget inodes no name (current or durable) and no open handle reaches."""
        self.churn += 1
        if self.churn < 200:
            return
        self.churn = 0
        seen = set()
        stack = [self.root] + [ino for ino, _ in self.handles.values()]
        while stack:
            ino = stack.pop()
            if ino in seen:
                continue
            seen.add(ino)
            node = self.nodes[ino]
            if node.is_dir:
                stack.extend(node.children.values())
                stack.extend(node.dchildren.values())
        for ino in list(self.nodes):
            if ino not in seen:
                del self.nodes[ino]

    # --- lookups -----------------------------------------------------------------------------
    def lookup(self, path):
        ino = self.root
        for part in path.split('/'):
            if not part:
                continue
            node = self.nodes[ino]
            if not node.is_dir:
                raise FuseOSError(errno.ENOTDIR)
            ino = node.children.get(part)
            if ino is None:
                raise FuseOSError(errno.ENOENT)
        return ino

    def parent_of(self, path):
        head, name = os.path.split(path.rstrip('/'))
        ino = self.lookup(head)
        node = self.nodes[ino]
        if not node.is_dir:
            raise FuseOSError(errno.ENOTDIR)
        return node, name

    def handle(self, fh):
        key = fh if isinstance(fh, int) else fh.fh
        return self.handles[key]

    def open_handle(self, ino, flags):
        fh = self.next_fh
        self.next_fh += 1
        self.handles[fh] = (ino, bool(flags & os.O_DSYNC))
        return fh

    # --- operations ------------------------------------------------------------------------
    def __call__(self, op, *args):
        return getattr(self, op)(*args)

    def getattr(self, path, fh=None):
        ino = self.handle(fh)[0] if fh else self.lookup(path)
        node = self.nodes[ino]
        size = 4096 if node.is_dir else len(node.data)
        return {
            'st_mode': (stat.S_IFDIR if node.is_dir else stat.S_IFREG) | node.mode,
            'st_nlink': 2 if node.is_dir else 1,
            'st_size': size,
            'st_blocks': (size + 511) // 512,
            'st_uid': os.getuid(),
            'st_gid': os.getgid(),
            'st_atime': node.mtime,
            'st_mtime': node.mtime,
            'st_ctime': node.mtime,
        }

    def access(self, path, amode):
        self.lookup(path)
        return 0

    def statfs(self, path):
        return {'f_bsize': 4096, 'f_frsize': 4096, 'f_blocks': 1 << 24, 'f_bfree': 1 << 23, 'f_bavail': 1 << 23,
                'f_files': 1 << 20, 'f_ffree': 1 << 19, 'f_namemax': 255}

    def opendir(self, path):
        ino = self.lookup(path)
        if not self.nodes[ino].is_dir:
            raise FuseOSError(errno.ENOTDIR)
        return self.open_handle(ino, 0)

    def readdir(self, path, fh):
        return ['.', '..'] + list(self.nodes[self.handle(fh)[0]].children)

    def releasedir(self, path, fh):
        self.handles.pop(fh, None)
        return 0

    def fsyncdir(self, path, datasync, fh):
        self.sync_dir(self.handle(fh)[0])
        return 0

    def mkdir(self, path, mode):
        parent, name = self.parent_of(path)
        if name in parent.children:
            raise FuseOSError(errno.EEXIST)
        parent.children[name] = self.add(Node(True, stat.S_IMODE(mode)))
        return 0

    def rmdir(self, path):
        parent, name = self.parent_of(path)
        ino = parent.children.get(name)
        if ino is None:
            raise FuseOSError(errno.ENOENT)
        if not self.nodes[ino].is_dir:
            raise FuseOSError(errno.ENOTDIR)
        if self.nodes[ino].children:
            raise FuseOSError(errno.ENOTEMPTY)
        del parent.children[name]
        self.collect()
        return 0

    def create(self, path, mode, fi):
        parent, name = self.parent_of(path)
        ino = parent.children.get(name)
        if ino is None:
            ino = self.add(Node(False, stat.S_IMODE(mode)))
            parent.children[name] = ino
        fi.fh = self.open_handle(ino, fi.flags)
        return 0

    def open(self, path, fi):
        ino = self.lookup(path)
        if fi.flags & os.O_TRUNC:
            self.resize(ino, 0)
        fi.fh = self.open_handle(ino, fi.flags)
        return 0

    def read(self, path, size, offset, fh):
        return bytes(self.nodes[self.handle(fh)[0]].data[offset:offset + size])

    def write(self, path, data, offset, fh):
        ino, synced = self.handle(fh)
        node = self.nodes[ino]
        end = offset + len(data)
        if offset > len(node.data):
            node.data.extend(bytes(offset - len(node.data)))
        node.data[offset:end] = data
        node.touch(offset, end)
        if synced:
            self.sync_file(ino)
        return len(data)

    def resize(self, ino, length):
        node = self.nodes[ino]
        old = len(node.data)
        if length < old:
            del node.data[length:]
        else:
            node.data.extend(bytes(length - old))
        node.touch(min(old, length), max(old, length))

    def truncate(self, path, length, fh=None):
        self.resize(self.handle(fh)[0] if fh else self.lookup(path), length)
        return 0

    def fsync(self, path, datasync, fh):
        self.sync_file(self.handle(fh)[0])
        return 0

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        self.handles.pop(fh.fh, None)
        return 0

    def unlink(self, path):
        parent, name = self.parent_of(path)
        ino = parent.children.get(name)
        if ino is None:
            raise FuseOSError(errno.ENOENT)
        if self.nodes[ino].is_dir:
            raise FuseOSError(errno.EISDIR)
        del parent.children[name]
        self.collect()
        return 0

    def rename(self, old, new):
        src, sname = self.parent_of(old)
        dst, dname = self.parent_of(new)
        ino = src.children.get(sname)
        if ino is None:
            raise FuseOSError(errno.ENOENT)
        there = dst.children.get(dname)
        if there is not None and there != ino:
            if self.nodes[there].is_dir:
                if not self.nodes[ino].is_dir:
                    raise FuseOSError(errno.EISDIR)
                if self.nodes[there].children:
                    raise FuseOSError(errno.ENOTEMPTY)
            elif self.nodes[ino].is_dir:
                raise FuseOSError(errno.ENOTDIR)
        del src.children[sname]
        dst.children[dname] = ino
        self.collect()
        return 0

    def chmod(self, path, mode):
        self.nodes[self.lookup(path)].mode = stat.S_IMODE(mode)
        return 0

    def chown(self, path, uid, gid):
        self.lookup(path)
        return 0

    def utimens(self, path, times=None):
        node = self.nodes[self.lookup(path)]
        node.mtime = times[1] if times else time.time_ns()
        return 0


if __name__ == '__main__':
    disk, mountpoint = sys.argv[1], sys.argv[2]
    FUSE(LazyFS(os.path.abspath(disk)), mountpoint, raw_fi=True, foreground=True, nothreads=True, fsname='lazyfs',
         hard_remove=True, big_writes=True, max_write=131072, max_read=131072)
