"""The segment log: framing, damage, group commit, rotation and deletion, failures."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from tracescore.errors import OverloadedError
from tracescore.storage.log import HEADER, MAGIC, Damage, SegmentLog, frame, read_segment


def _records(n: int) -> list[tuple[int, bytes]]:
    return [(1 + i % 4, f"record {i} ".encode() * (i + 1)) for i in range(n)]


def _segment(records: list[tuple[int, bytes]]) -> bytes:
    return MAGIC + b"".join(frame(kind, payload) for kind, payload in records)


def test_intact_records_read_back_in_order() -> None:
    records = _records(20)
    damage = Damage()
    assert list(read_segment(_segment(records), damage, "a.wal")) == records
    assert damage.regions == 0


def test_a_torn_tail_is_counted_and_what_precedes_it_kept() -> None:
    records = _records(10)
    data = _segment(records)
    for cut in (1, HEADER.size - 1, HEADER.size + 3, len(frame(*records[-1])) - 1):
        damage = Damage()
        got = list(read_segment(data[:-cut], damage, "a.wal"))
        assert got == records[:-1], cut
        assert damage.regions == 1
        assert damage.bytes == len(frame(*records[-1])) - cut
        assert damage.files == ["a.wal"]


def test_damage_in_the_middle_skips_one_record_and_keeps_the_rest() -> None:
    records = _records(10)
    data = bytearray(_segment(records))
    offset = len(MAGIC) + sum(len(frame(*r)) for r in records[:4])
    data[offset + HEADER.size + 2] ^= 0xFF  # a flipped bit in record 4's payload
    damage = Damage()
    got = list(read_segment(bytes(data), damage, "a.wal"))
    assert got == records[:4] + records[5:]
    assert (damage.regions, damage.bytes) == (1, len(frame(*records[4])))


def test_a_file_that_is_not_a_segment_is_damage_not_data() -> None:
    damage = Damage()
    assert list(read_segment(b"hello world", damage, "x.wal")) == []
    assert (damage.regions, damage.bytes) == (1, 11)


def test_appends_are_durable_once_committed_and_scan_back(tmp_path: Path) -> None:
    async def main() -> None:
        wal = SegmentLog(tmp_path, segment_bytes=1 << 20)
        wal.open()
        wal.start()
        for kind, payload in _records(50):
            wal.append(kind, payload)
        await wal.commit()
        await wal.close()

    asyncio.run(main())
    again = SegmentLog(tmp_path, segment_bytes=1 << 20)
    again.open()
    damage = Damage()
    assert [(k, p) for _, k, p in again.scan(damage)] == _records(50)
    assert damage.regions == 0
    assert again.segment == 2, "a new process appends to a new segment"


def test_requests_committing_together_share_an_fsync(tmp_path: Path) -> None:
    async def main() -> tuple[int, int]:
        wal = SegmentLog(tmp_path, segment_bytes=1 << 20)
        wal.open()
        wal.start()
        futures = []
        for kind, payload in _records(200):
            wal.append(kind, payload)
            futures.append(wal.commit())
        await asyncio.gather(*futures)
        await wal.close()
        return wal.syncs, len(futures)

    syncs, commits = asyncio.run(main())
    assert 1 <= syncs < commits / 4


def test_segments_rotate_and_old_ones_are_deleted_when_released(tmp_path: Path) -> None:
    async def main() -> SegmentLog:
        wal = SegmentLog(tmp_path, segment_bytes=4096)
        wal.open()
        wal.start()
        for i in range(40):
            wal.append(1, bytes(500) + bytes([i]))
        await wal.commit()
        return wal

    async def run() -> None:
        wal = await main()
        files = sorted(p.name for p in tmp_path.glob("*.wal"))
        assert len(files) >= 5
        assert all(os.path.getsize(tmp_path / f) <= 4096 for f in files)
        freed = wal.release_through(wal.segment - 2)
        assert freed > 0
        assert len(list(tmp_path.glob("*.wal"))) == 2
        assert wal.disk_bytes == sum(p.stat().st_size for p in tmp_path.glob("*.wal"))
        wal.release_through(wal.segment + 5)
        assert len(list(tmp_path.glob("*.wal"))) == 1, "the open segment is never deleted"
        await wal.close()

    asyncio.run(run())


def test_a_failed_write_fails_every_waiting_commit_with_a_retryable_error(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        wal = SegmentLog(tmp_path / "wal", segment_bytes=1 << 20)
        wal.open()
        wal.start()
        wal.append(1, b"first")
        await wal.commit()
        shutil.rmtree(tmp_path / "wal")  # the next segment cannot be created
        wal.segment_bytes = 64
        wal.append(1, bytes(100))
        with pytest.raises(OverloadedError, match="storage: writing"):
            await wal.commit()
        with pytest.raises(OverloadedError):
            await wal.commit()
        assert wal.failure is not None
        await wal.close()

    asyncio.run(main())


def test_one_process_per_folder(tmp_path: Path) -> None:
    first = SegmentLog(tmp_path, segment_bytes=1 << 20)
    first.open()
    second = SegmentLog(tmp_path, segment_bytes=1 << 20)
    with pytest.raises(OSError, match="in use by another process"):
        second.open()


def test_a_folder_that_cannot_be_made_is_named(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    wal = SegmentLog(tmp_path / "file" / "wal", segment_bytes=1 << 20)
    with pytest.raises(OSError, match=r"storage\.directory .*file/wal"):
        wal.open()
