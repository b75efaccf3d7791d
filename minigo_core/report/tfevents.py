"""TensorBoard's events file format, written whole as bytes: scalars as `Event` protos in TFRecord framing.

An events file is a sequence of records (length, its masked CRC-32C, the serialised `Event`, its masked
CRC-32C), the first of them the file version. The protos and the checksum are the `tensorboard` package's
own, so TensorBoard and its `EventAccumulator` read what `events_bytes` writes; each point is a legacy
`simple_value` summary, which both the scalars dashboard and `EventAccumulator.Scalars` read. `read_points`
reads a file back, checking every record (the chaos run's check that none is visible half written).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

FILE_VERSION = "brain.Event:2"


@dataclass(frozen=True)
class Point:
    """The scalars of one step: tag -> value, at the wall time (epoch seconds) they stand for."""

    step: int
    wall_time: float
    values: dict[str, float] = field(default_factory=dict)


def _crc(data: bytes) -> bytes:
    return struct.pack("<I", masked_crc32c(data))


def record(data: bytes) -> bytes:
    """One TFRecord: the length of `data`, its masked CRC-32C, `data`, the masked CRC-32C of `data`."""
    header = struct.pack("<Q", len(data))
    return header + _crc(header) + data + _crc(data)


def events_bytes(points: Iterable[Point]) -> bytes:
    """An events file of `points` in order of step (one `Event` a step; values that are not finite numbers
    left out), after the file-version event, stamped with the first point's wall time."""
    ordered = sorted(points, key=lambda p: p.step)
    start = ordered[0].wall_time if ordered else 0.0
    out = [record(event_pb2.Event(wall_time=start, file_version=FILE_VERSION).SerializeToString())]
    for point in ordered:
        values = [
            summary_pb2.Summary.Value(tag=tag, simple_value=float(value))
            for tag, value in point.values.items()
            if value is not None and math.isfinite(value)
        ]
        if values:
            event = event_pb2.Event(
                wall_time=point.wall_time, step=int(point.step), summary=summary_pb2.Summary(value=values)
            )
            out.append(record(event.SerializeToString()))
    return b"".join(out)


def read_points(data: bytes, where: str = "events file") -> list[Point]:
    """The points of an events file (what `events_bytes` wrote, in its order); ValueError naming `where` at a
    record cut off or with a wrong checksum (a file written half)."""
    points, offset = [], 0
    while offset < len(data):
        header = data[offset : offset + 8]
        length = struct.unpack("<Q", header)[0] if len(header) == 8 else 0
        head_crc, body, body_crc = (
            data[offset + 8 : offset + 12],
            data[offset + 12 : offset + 12 + length],
            data[offset + 12 + length : offset + 16 + length],
        )
        if len(header) < 8 or len(body_crc) < 4:
            raise ValueError(f"{where}: the record at byte {offset} is cut off")
        if head_crc != _crc(header) or body_crc != _crc(body):
            raise ValueError(f"{where}: the record at byte {offset} fails its checksum")
        event = event_pb2.Event.FromString(body)
        if event.HasField("summary"):
            values = {v.tag: v.simple_value for v in event.summary.value}
            points.append(Point(event.step, event.wall_time, values))
        offset += 16 + length
    return points
