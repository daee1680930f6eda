"""An append-only log in segment files, each record framed with its length and a CRC.

Records are appended on the event loop into memory; one committer thread writes them and
fsyncs (group commit: every record appended while one fsync runs goes out with the next).
`commit()` returns a future resolved once everything appended so far is on disk. A segment
file is closed past `segment_bytes`; the oldest segments are deleted once the caller says
nothing in them is needed (`release_through`).

Why a file of our own and not sqlite3 or a library queue: a request is written once and read
only after a crash, so an append and an fdatasync are all it needs; the record layout is
simple enough to check with a CRC and to resynchronise on after damage.

The frame and reading it back are `storage/frames.py`, re-exported here.
"""

from __future__ import annotations

import asyncio
import fcntl
import itertools
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from tracescore import semconv
from tracescore.errors import OverloadedError
from tracescore.storage.frames import HEADER, MAGIC, Damage, frame, header, read_segment

__all__ = ["HEADER", "MAGIC", "Damage", "SegmentLog", "frame", "header", "read_segment"]

log = logging.getLogger(__name__)

_SUFFIX = ".wal"
_IOV_MAX = 512  # below every platform's IOV_MAX (1024 on Linux)


def _segment_of(pending: tuple[int, int, tuple[bytes, ...]]) -> int:
    return pending[0]


class SegmentLog:
    """Segment files `<n>.wal` in one folder; appends from the event loop, one writer thread."""

    def __init__(self, directory: Path, segment_bytes: int, sync_interval: float = 0.0) -> None:
        """Nothing touches the disk until `open()`.

        Args:
            directory: the folder (created if missing).
            segment_bytes: a segment is closed once it is this large.
            sync_interval: seconds the committer waits to gather records before each fsync
                (0: sync at once; records appended meanwhile share the next fsync).
        """
        self.directory = directory
        self.segment_bytes = segment_bytes
        self.sync_interval = sync_interval
        self.sizes: dict[int, int] = {}
        self.segment = 0
        self._lock_fd = -1
        self._lock = threading.Condition()
        self._pending: list[tuple[int, int, tuple[bytes, ...]]] = []  # segment, kind, payload
        self._appended = 0  # records appended
        self._durable = 0  # records on disk
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closing = False
        self._fd = -1  # the committer's open segment
        self._fd_segment = -1
        self.failure: OverloadedError | None = None
        self.syncs = 0
        self.sync_seconds = 0.0

    def open(self) -> None:
        """Create the folder, lock it for this process, find the segments left in it.

        Raises OSError naming the folder when it cannot be made or another process holds it
        (two writers would interleave their records)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.directory / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise OSError(exc.errno, f"storage.directory {self.directory}: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise OSError(
                exc.errno, f"storage.directory {self.directory} is in use by another process"
            ) from exc
        self._lock_fd = fd
        self.sizes = {n: p.stat().st_size for n, p in self._segments()}
        self.segment = max(self.sizes, default=0)  # appends go to a new segment after these
        self._rotate()

    # -- reading (before start) ------------------------------------------------------------

    def _segments(self) -> list[tuple[int, Path]]:
        found = []
        for path in self.directory.glob(f"*{_SUFFIX}"):
            stem = path.name[: -len(_SUFFIX)]
            if stem.isdigit():
                found.append((int(stem), path))
        return sorted(found)

    def path(self, segment: int) -> Path:
        """The file of segment `segment`."""
        return self.directory / f"{segment:08d}{_SUFFIX}"

    def scan(self, damage: Damage) -> Iterator[tuple[int, int, bytes]]:
        """`(segment, kind, payload)` of every intact record left by earlier processes."""
        for number, path in self._segments():
            if number >= self.segment:
                break
            for kind, payload in read_segment(path.read_bytes(), damage, path.name):
                yield number, kind, payload

    # -- appending -------------------------------------------------------------------------

    @property
    def disk_bytes(self) -> int:
        """Bytes in segment files, counting what is appended but not yet written."""
        return sum(self.sizes.values())

    def start(self) -> None:
        """Start the committer thread (on the running event loop)."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(
            target=self._commit_loop, name="tracescore-wal", daemon=True
        )
        self._thread.start()

    def append(self, kind: int, *payload: bytes) -> int:
        """Queue one record (its payload is `payload` joined) for the committer; returns the
        segment it goes to."""
        # Framed (CRC) by the committer thread, off the event loop, and written with writev:
        # a request's bytes are never copied in user space on their way to the file.
        nbytes = HEADER.size + sum(map(len, payload))
        size = self.sizes[self.segment]
        if size + nbytes > self.segment_bytes and size > len(MAGIC):
            self._rotate()
        segment = self.segment
        self.sizes[segment] += nbytes
        with self._lock:
            self._pending.append((segment, kind, payload))
            self._appended += 1
            self._lock.notify()
        return segment

    def _rotate(self) -> None:
        self.segment += 1
        self.sizes[self.segment] = len(MAGIC)

    def commit(self) -> asyncio.Future[None]:
        """A future resolved once every record appended so far is on disk.

        It fails with OverloadedError (receivers answer with a retryable status) once a write
        or fsync failed."""
        assert self._loop is not None, "start() first"
        future: asyncio.Future[None] = self._loop.create_future()
        if self.failure is not None:
            future.set_exception(self.failure)
        elif self._durable >= self._appended:
            future.set_result(None)
        else:
            self._waiters.append((self._appended, future))
        return future

    def release_through(self, segment: int) -> int:
        """Delete every closed segment numbered up to `segment`; returns bytes freed."""
        freed = 0
        for number in sorted(self.sizes):
            if number > segment or number >= self.segment:
                break
            freed += self.sizes.pop(number)
            try:
                self.path(number).unlink()
            except FileNotFoundError:
                pass  # never written: every record in it was appended and released at once
            except OSError as exc:
                log.warning("storage: could not delete %s: %s", self.path(number), exc)
        return freed

    async def close(self, timeout: float = 5.0) -> None:
        """Write and sync what is pending, then stop the committer."""
        with self._lock:
            self._closing = True
            self._lock.notify()
        thread = self._thread
        if thread is not None:
            await asyncio.get_running_loop().run_in_executor(None, thread.join, timeout)
        self._thread = None

    # -- the committer thread --------------------------------------------------------------

    def _commit_loop(self) -> None:
        while True:
            with self._lock:
                while not self._pending and not self._closing:
                    self._lock.wait()
                if not self._pending and self._closing:
                    break
            if self.sync_interval > 0 and not self._closing:
                time.sleep(self.sync_interval)
            with self._lock:
                chunks, self._pending = self._pending, []
                target = self._appended
            try:
                self._write(chunks)
                t0 = time.perf_counter()
                os.fdatasync(self._fd)
                self.sync_seconds += time.perf_counter() - t0
                self.syncs += 1
            except OSError as exc:
                self._failed(exc)
                break
            self._durable = target
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self._resolve)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._lock_fd >= 0:  # the lock goes with the process too, a crash included
            os.close(self._lock_fd)
            self._lock_fd = -1

    def _write(self, chunks: list[tuple[int, int, tuple[bytes, ...]]]) -> None:
        for segment, run in itertools.groupby(chunks, key=_segment_of):
            iov: list[bytes] = []
            for _, kind, parts in run:
                iov.append(header(kind, parts))
                iov.extend(parts)
            if segment != self._fd_segment:
                if self._fd >= 0:
                    fd, self._fd = self._fd, -1
                    try:
                        os.fdatasync(fd)
                    finally:
                        os.close(fd)
                self._fd = os.open(
                    self.path(segment), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600
                )
                self._fd_segment = segment
                os.write(self._fd, MAGIC)
                self._sync_directory()
            self._writev(iov)

    def _writev(self, iov: list[bytes]) -> None:
        for start in range(0, len(iov), _IOV_MAX):
            chunk = iov[start : start + _IOV_MAX]
            written = os.writev(self._fd, chunk)
            total = sum(map(len, chunk))
            if written < total:  # a short write (rare on a file): the rest the simple way
                view = memoryview(b"".join(chunk))[written:]
                while view:
                    view = view[os.write(self._fd, view) :]

    def _sync_directory(self) -> None:
        # A new file's name is durable only once its folder is synced.
        dir_fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def _failed(self, exc: OSError) -> None:
        # After a failed fsync the file's state is unknown: no later write is trusted.
        self.failure = OverloadedError(
            f"storage: writing {self.directory} failed: {exc}",
            reason=semconv.REFUSED_STORAGE_FAILED,
        )
        log.error("%s; requests are refused until restart", self.failure)
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._resolve)

    def _resolve(self) -> None:
        durable, failure = self._durable, self.failure
        keep: list[tuple[int, asyncio.Future[None]]] = []
        for target, future in self._waiters:
            if future.done():
                continue
            if target <= durable:
                future.set_result(None)
            elif failure is not None:
                future.set_exception(failure)
            else:
                keep.append((target, future))
        self._waiters = keep
