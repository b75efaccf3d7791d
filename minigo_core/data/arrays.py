"""Numpy vectors <-> Arrow arrays, through their buffers.

pyarrow's `pa.array(ndarray)` and `to_numpy` import pandas on their first call (pyarrow 26: about a third of
a second) only to ask whether the data is a pandas object, and every process that writes or reads a game
file or a shard (self-play, games-complete, window, training) would pay it once. `from_numpy` and `values`
build and read a null-free fixed-width or boolean array's data buffer directly: the same arrays, no pandas.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

# Arrow type name -> numpy dtype, for the types the game files and shards use
_DTYPES = {
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "halffloat": np.float16,
    "float": np.float32,
    "double": np.float64,
}


def values(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of a null-free primitive (integer, float) or boolean array, as a new numpy array.

    A chunked array is combined first. Other types and arrays with nulls go through `to_numpy`."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    name = str(arr.type)
    if arr.null_count or not (name in _DTYPES or name == "bool"):
        return arr.to_numpy(zero_copy_only=False)
    data = arr.buffers()[1]
    n, offset = len(arr), arr.offset
    if name == "bool":
        if n == 0:
            return np.zeros(0, bool)
        bits = np.frombuffer(data, np.uint8)
        return np.unpackbits(bits, bitorder="little")[offset : offset + n].astype(bool)
    dtype = np.dtype(_DTYPES[name])
    return np.frombuffer(data, dtype, count=n, offset=offset * dtype.itemsize).copy()


def from_numpy(data: np.ndarray, dtype: pa.DataType | None = None) -> pa.Array:
    """A numpy vector as an Arrow array of a fixed-width `dtype` (default: the vector's own) or bool, built
    from its buffer: the same array as `pa.array(data, dtype)`."""
    data = np.ascontiguousarray(data)
    if dtype is None:
        dtype = pa.bool_() if data.dtype == bool else pa.from_numpy_dtype(data.dtype)
    if dtype == pa.bool_():
        buffer = np.packbits(data.astype(bool), bitorder="little")
    else:
        buffer = data.astype(dtype.to_pandas_dtype(), copy=False)
    return pa.Array.from_buffers(dtype, len(data), [None, pa.py_buffer(buffer)])
