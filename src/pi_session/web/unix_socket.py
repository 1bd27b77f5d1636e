"""The Unix socket ``pi-session serve --unix-socket PATH`` listens on: made
so that only its owner can connect, which is what lets the server ask no
access token there.

- the socket file is created with mode 0600 (under a umask of 0177, so it
  is never more open, not even for an instant) and set to 0600 again;
- its directory must be owned by the server's user (or root) and not
  writable by anyone else unless it is sticky (``/tmp``): otherwise another
  user could remove the socket and put one of their own in its place;
- an existing file at the path is replaced only when it is a socket of the
  same user that nobody listens on (one left by a server that died); any
  other file is refused.

On Linux, connecting to a Unix socket needs write permission on its file,
so another user (root aside) gets ``EACCES``.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import PiSessionError

__all__ = ["UnixListener", "UnixSocketError", "bind_unix_socket"]


class UnixSocketError(PiSessionError, ValueError):
    """The socket cannot be made safely at the path asked (one line)."""


def _check_directory(directory: Path, uid: int) -> None:
    try:
        info = directory.stat()
    except OSError as exc:
        raise UnixSocketError(f"--unix-socket: {directory}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise UnixSocketError(f"--unix-socket: {directory} is not a directory")
    if info.st_uid not in (uid, 0):
        raise UnixSocketError(f"--unix-socket: {directory} belongs to another user (uid {info.st_uid}); use a directory of your own")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX:
        raise UnixSocketError(
            f"--unix-socket: {directory} is writable by other users, who could replace the socket; "
            "use a directory only you can write (e.g. $XDG_RUNTIME_DIR)"
        )


def _clear_stale(path: Path, uid: int) -> None:
    """Remove a socket of ``uid`` at ``path`` that nobody listens on."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != uid:
        raise UnixSocketError(f"--unix-socket: {path} exists and is not a socket of yours; choose another path")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError as exc:
        if exc.errno not in (errno.ECONNREFUSED, errno.ENOENT):
            raise UnixSocketError(f"--unix-socket: {path}: {exc.strerror or exc}") from None
        path.unlink(missing_ok=True)
        return
    finally:
        probe.close()
    raise UnixSocketError(f"--unix-socket: {path}: another server is listening there")


@dataclass
class UnixListener:
    """A bound Unix socket and its file.

    Attributes:
        sock: the bound (not yet listening) stream socket.
        path: the socket file (absolute).
        file_id: ``(st_dev, st_ino)`` of the file the bind made.
    """

    sock: socket.socket
    path: Path
    file_id: tuple[int, int]

    def close(self) -> None:
        """Close the socket and remove its file when it is still the one
        the bind made (nothing else took the path since)."""
        self.sock.close()
        try:
            info = self.path.lstat()
        except FileNotFoundError:
            return
        if (info.st_dev, info.st_ino) == self.file_id:
            self.path.unlink(missing_ok=True)


def bind_unix_socket(path: str | os.PathLike[str]) -> UnixListener:
    """A bound (not yet listening) Unix stream socket at ``path``, its file
    of mode 0600, owned by the calling user.

    Raises:
        UnixSocketError: the directory is missing, another user's, or
            writable by others without the sticky bit; the path holds
            another file or a live server's socket; the bind failed."""
    target = Path(os.path.abspath(path))
    uid = os.geteuid()
    _check_directory(target.parent, uid)
    _clear_stale(target, uid)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(target))
    except OSError as exc:
        sock.close()
        raise UnixSocketError(f"--unix-socket: {target}: {exc.strerror or exc}") from None
    finally:
        os.umask(old)
    os.chmod(target, 0o600)
    info = target.lstat()
    return UnixListener(sock, target, (info.st_dev, info.st_ino))
