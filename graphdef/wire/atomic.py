"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

import os
import secrets


def write_atomically(path, write):
    """Calls write(file) on a temporary file beside `path`, syncs it, then renames it to `path`.

    The rename is atomic, so readers see the old file or the new one, never a half-written
    one. On any error the temporary file is removed and the old file is left as it was.
    """
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    tmp, fd = _create_temporary(directory, os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        remove_quietly(tmp)
        raise
    _sync_directory(directory)


def write_files_atomically(writes):
    """write_atomically for several files that belong together: [(path, write)], renamed in order.

    Every file is written and synced to its temporary first; only then are they renamed, in
    the order given. A failure while writing leaves every old file as it was and no temporary
    behind; only a crash between two renames (metadata operations, microseconds apart) can
    leave a newer first file beside an older second one.
    """
    staged = []
    try:
        for path, write in writes:
            path = os.path.abspath(path)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp, fd = _create_temporary(os.path.dirname(path), os.path.basename(path))
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
        while staged:
            tmp, path = staged[0]
            os.replace(tmp, path)
            staged.pop(0)
            _sync_directory(os.path.dirname(path))
    except BaseException:
        for tmp, _ in staged:
            remove_quietly(tmp)
        raise


def _create_temporary(directory, basename):
    """A new hidden file; created with mode 0o666 so the umask applies, as for any new file."""
    while True:
        tmp = os.path.join(directory, f".{basename}.{secrets.token_hex(6)}.tmp")
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except FileExistsError:
            continue


def _sync_directory(directory):
    """Makes the rename itself durable; some systems cannot open a directory, and need not."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_quietly(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
