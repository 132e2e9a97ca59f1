"""Columns in, columns out: pandas Series and pyarrow arrays through bndp's samplers.

:func:`columnar` wraps a sampler whose first data argument is ``value`` (``bndp.sample`` and
every mechanism's ``sample``). The wrapped sampler accepts, besides NumPy input,

* a :class:`pandas.Series`: the result is a Series with the same index and name;
* a Polars ``Series``: the result is a Polars Series of the same name (``Float64``, nulls
  where the input had nulls);
* a :class:`pyarrow.Array` or :class:`pyarrow.ChunkedArray`: the result is of the same kind
  (same chunk lengths), with type ``float64``;

* a NumPy masked array (:class:`numpy.ma.MaskedArray`): the result is a masked array with
  the same mask; masked entries are missing values (below), so nothing about the values
  hidden under the mask is used or released;

and per-row ``lower``/``upper`` given the same way. Integer columns (NumPy integer dtypes,
pandas' nullable ``Int8`` ... ``UInt64``, Polars and Arrow integer types, masked integer
arrays) reach the sampler as integer NumPy arrays, so that the sampler's integer rule applies
(the integer law for integer data with integral bounds and sensitivity): when the sampler
returns integers, the result keeps the column's own integer type (``Int32`` stays ``Int32``;
a wider type, int64, where the sampler had to widen); when it returns floats, the result is
float64 (``Float64`` for nullable pandas dtypes). Tables (DataFrames, Arrow Tables) are
refused with a ``TypeError`` pointing to the frame API: a sampler releases one column.

Missing values (``None``/``NaN``/``pd.NA`` in pandas, nulls and NaN in Arrow, NaN in NumPy,
masked entries of a masked array): ``nulls="raise"`` (the default) refuses them with an error
naming the first position; ``nulls="keep"`` passes them through untouched (no noise is drawn
for them and they stay missing in the result, as NaN, ``pd.NA`` for nullable pandas dtypes,
Arrow and Polars nulls, or masked entries whose data is NaN, 0 in an integer result).

Every sampler declares ``nulls`` in its own signature (so that it is documented in its
Parameters and visible to type checkers); :func:`columnar` implements it.

A torch tensor or an array-API array (the released values, ``lower``, ``upper``) goes
through :mod:`bndp._columns._arrays`: drawn as float64 NumPy on the host (its NaN
entries are missing values, as in NumPy), returned with the input's type, device and
floating dtype. A mechanism with a device-native draw (the gradient mechanisms) keeps a
tensor on a GPU there, unless it has missing values (those go through the host path).

Neither pandas nor pyarrow is imported here: an object is recognised as a column only if its
library is already loaded, so the NumPy-only core never pays for them.
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable, Literal, TypeVar

import numpy as np

from .._values import (WideValues, from_ints, approx, as_values, wide_column,
                       wide_int_column)
from . import _arrays

__all__ = ["columnar", "to_numpy", "Column", "check_nulls", "is_column", "Nulls"]

#: Type of the ``nulls=`` argument of every sampler.
Nulls = Literal["raise", "keep"]

F = TypeVar("F", bound=Callable[..., Any])

_PLAIN = (float, int, np.ndarray, list, tuple, np.floating, np.integer)
# bounds that are neither columns nor tensors (exact types; None: not given)
_PLAIN_BOUND = (float, int, np.ndarray, np.float64, type(None))


def check_nulls(nulls: Any) -> str:
    if nulls not in ("raise", "keep"):
        raise ValueError(f'`nulls` must be "raise" or "keep"; got {nulls!r}')
    return nulls


def _pandas_series(x: Any) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(x, pd.Series)


def _arrow_kind(x: Any) -> str | None:
    pa = sys.modules.get("pyarrow")
    if pa is None:
        return None
    if isinstance(x, pa.ChunkedArray):
        return "chunked"
    if isinstance(x, pa.Array):
        return "arrow"
    return None


def _polars_series(x: Any) -> bool:
    pl = sys.modules.get("polars")
    return pl is not None and isinstance(x, pl.Series)


def is_column(x: Any) -> bool:
    """True for a pandas or Polars Series, pyarrow Array or ChunkedArray."""
    return _pandas_series(x) or _arrow_kind(x) is not None or _polars_series(x)


class Column:
    """A column converted to NumPy, with what is needed to convert a result back.

    ``values`` is an integer array for an integer column (0 where ``missing`` is True), else
    float64 with NaN where ``missing`` is True (``missing`` is None when nothing is
    missing), or :class:`bndp._values.WideValues` when some value is not a double.
    """

    __slots__ = ("kind", "values", "missing", "_src", "_arrow_null")

    def __init__(self, kind: str, values: Any, missing: np.ndarray | None, src: Any,
                 arrow_null: np.ndarray | None = None) -> None:
        self.kind = kind
        self.values = values
        self.missing = missing
        self._src = src
        self._arrow_null = arrow_null

    @property
    def null(self) -> np.ndarray | None:
        """The Arrow nulls of an Arrow column (None when there are none, or for any other
        kind): the missing values that are null rather than NaN."""
        return self._arrow_null

    def restore(self, out: Any) -> Any:
        """Wrap a result of the column's shape in the column's kind: an integer array (the
        integer law's values) as the column's integer type of that width, anything else as
        float64."""
        if self.kind == "numpy":
            return out
        if isinstance(out, np.ndarray) and out.dtype.kind in "iu":
            return _restore_ints(self, out)
        out = np.asarray(out, dtype=np.float64)
        if self.kind == "masked":
            # masked entries were never sampled: their data is NaN, not the hidden value
            mask = np.broadcast_to(np.ma.getmaskarray(self._src), out.shape).copy()
            return np.ma.MaskedArray(out, mask=mask)
        if self.kind == "pandas":
            pd = sys.modules["pandas"]
            s = self._src
            if isinstance(s.dtype, pd.api.extensions.ExtensionDtype) and self.missing is not None:
                res = pd.array(out, dtype="Float64")
                res[self.missing] = pd.NA
                return pd.Series(res, index=s.index, name=s.name, copy=False)
            return pd.Series(out, index=s.index, name=s.name, copy=False)
        if self.kind == "polars":
            pl = sys.modules["polars"]
            res = pl.Series(self._src.name, out, dtype=pl.Float64)
            if self._arrow_null is not None and self._arrow_null.any():
                res = res.scatter(np.flatnonzero(self._arrow_null), None)
            return res
        pa = sys.modules["pyarrow"]
        null = self._arrow_null
        if self.kind == "arrow":
            return pa.array(out, type=pa.float64(),
                            mask=null if null is not None and null.any() else None)
        chunks = []
        start = 0
        for ch in self._src.chunks:
            n = len(ch)
            m = None if null is None or not null[start:start + n].any() else null[start:start + n]
            chunks.append(pa.array(out[start:start + n], type=pa.float64(), mask=m))
            start += n
        return pa.chunked_array(chunks, type=pa.float64())


def _restore_ints(col: Column, out: np.ndarray) -> Any:
    """An integer result in the column's kind, with the result's integer dtype (the
    column's own, or a wider one the sampler chose); missing entries stay missing."""
    miss = col.missing
    if col.kind == "masked":
        mask = np.broadcast_to(np.ma.getmaskarray(col._src), out.shape).copy()
        data = out.copy()
        data[mask] = 0                  # never the hidden value
        return np.ma.MaskedArray(data, mask=mask)
    if col.kind == "pandas":
        pd = sys.modules["pandas"]
        s = col._src
        dt = s.dtype
        if isinstance(dt, pd.api.extensions.ExtensionDtype):
            if isinstance(dt, getattr(pd, "ArrowDtype", ())):
                pa = sys.modules["pyarrow"]
                arr = pa.array(out, mask=miss if miss is not None else None)
                res: Any = pd.array(arr, dtype=pd.ArrowDtype(arr.type))
            else:
                res = pd.array(out)           # the nullable dtype of out's width
                if miss is not None:
                    res[miss] = pd.NA
            return pd.Series(res, index=s.index, name=s.name, copy=False)
        return pd.Series(out, index=s.index, name=s.name, copy=False)
    if col.kind == "polars":
        pl = sys.modules["polars"]
        res = pl.Series(col._src.name, out)
        if col._arrow_null is not None and col._arrow_null.any():
            res = res.scatter(np.flatnonzero(col._arrow_null), None)
        return res
    pa = sys.modules["pyarrow"]
    t = pa.from_numpy_dtype(out.dtype)
    null = col._arrow_null
    if col.kind == "arrow":
        return pa.array(out, type=t, mask=null if null is not None and null.any() else None)
    chunks = []
    start = 0
    for ch in col._src.chunks:
        n = len(ch)
        m = None if null is None or not null[start:start + n].any() else null[start:start + n]
        chunks.append(pa.array(out[start:start + n], type=t, mask=m))
        start += n
    return pa.chunked_array(chunks, type=t)


def _numeric_check(kind_ok: bool, name: str, dtype: Any) -> None:
    if not kind_ok:
        raise TypeError(f"`{name}` must hold real numbers; got a column of type {dtype}")


def to_numpy(x: Any, name: str = "value") -> Column:
    """Convert a pandas Series, a pyarrow (Chunked)Array, a NumPy masked array or anything
    NumPy accepts (tables are refused)."""
    if isinstance(x, np.ma.MaskedArray):
        masked = np.ma.getmaskarray(x)
        data = np.ma.getdata(x)
        if data.dtype.kind in "iu":     # integers: 0 under the mask (hidden values unused)
            ints = data.copy()
            ints[masked] = 0
            return Column("masked", ints, masked if masked.any() else None, x)
        if data.dtype.kind == "O":
            data = np.where(masked, np.nan, data)
        vals: Any = as_values(data, name)
        if isinstance(vals, WideValues):
            vals.approx[masked] = np.nan          # the hidden values go no further
        else:
            vals = np.where(masked, np.nan, vals)
        missing = masked | np.isnan(approx(vals))
        return Column("masked", vals, missing if missing.any() else None, x)
    if _pandas_series(x):
        pd = sys.modules["pandas"]
        if isinstance(x.dtype, pd.SparseDtype):     # released values are dense anyway
            x = x.sparse.to_dense()
        dt = x.dtype
        _numeric_check(pd.api.types.is_numeric_dtype(dt) and not pd.api.types.is_bool_dtype(dt)
                       and not pd.api.types.is_complex_dtype(dt), name, dt)
        missing = x.isna().to_numpy()
        vals = (_pandas_ints(x, dt, missing) if dt.kind in "iu"
                else _pandas_values(x, dt, missing, name))
        return Column("pandas", vals, missing if missing.any() else None, x)
    if _polars_series(x):
        dt = x.dtype
        if not dt.is_numeric() or dt == sys.modules["polars"].Boolean:
            _numeric_check(False, name, dt)
        if dt.is_integer() and not is_polars_128(dt):
            null = np.asarray(x.is_null().to_numpy(), dtype=bool)
            vals = np.asarray((x.fill_null(0) if null.any() else x).to_numpy())
            return Column("polars", vals, null if null.any() else None, x,
                          null if null.any() else None)
        vals, null = polars_wide_values(x) if is_polars_128(dt) else arrow_values(x.to_arrow())
        missing = null | np.isnan(approx(vals))
        return Column("polars", vals, missing if missing.any() else None, x,
                      null if null.any() else None)
    kind = _arrow_kind(x)
    if kind is not None:
        pa = sys.modules["pyarrow"]
        t = x.type
        _numeric_check(pa.types.is_integer(t) or pa.types.is_floating(t)
                       or pa.types.is_decimal(t), name, t)
        vals, null = arrow_ints(x) if pa.types.is_integer(t) else arrow_values(x)
        missing = null | np.isnan(approx(vals))
        return Column(kind, vals, missing if missing.any() else None, x,
                      null if null.any() else None)
    if type(x) is np.ndarray and x.dtype.kind in "iu":
        return Column("numpy", x, None, x)      # integers: as they are (nothing missing)
    a = as_values(x, name)
    missing = np.isnan(approx(a))
    return Column("numpy", a, missing if missing.any() else None, x)


def _pandas_values(x: Any, dt: Any, missing: np.ndarray, name: str) -> Any:
    """A pandas Series' values: float64 (NaN where missing) when every value converts to a
    double exactly, else :class:`bndp._values.WideValues` (wide integers, decimals)."""
    if dt.kind in "f" and dt.itemsize <= 8 or dt.kind in "iu" and dt.itemsize < 8:
        return x.to_numpy(dtype=np.float64, na_value=np.nan)
    if dt.kind in "iu":                         # numpy or nullable 64-bit integers
        ints = x.to_numpy(dtype=dt.numpy_dtype if hasattr(dt, "numpy_dtype") else dt,
                          na_value=0) if missing.any() else x.to_numpy()
        v = from_ints(np.asarray(ints), missing if missing.any() else None)
        return v
    pa = sys.modules.get("pyarrow")
    arr: Any = getattr(x, "array", None)
    if pa is not None and hasattr(arr, "_pa_array"):      # pandas ArrowDtype
        return arrow_values(arr._pa_array)[0]
    objs = x.to_numpy(dtype=object)
    return as_values(np.where(missing, np.nan, objs) if missing.any() else objs, name)


def _pandas_ints(x: Any, dt: Any, missing: np.ndarray) -> np.ndarray:
    """An integer pandas Series' values (NumPy, nullable or Arrow-backed integer dtype) as
    a NumPy array of its integer dtype, 0 where missing."""
    np_dt = getattr(dt, "numpy_dtype", dt)
    if missing.any():
        return np.asarray(x.to_numpy(dtype=np_dt, na_value=0))
    return np.asarray(x.to_numpy(dtype=np_dt))


def arrow_ints(x: Any) -> tuple[np.ndarray, np.ndarray]:
    """An Arrow integer (Chunked)Array's values as a NumPy array of its integer dtype (0 at
    nulls) and its null mask."""
    pa = sys.modules["pyarrow"]
    if isinstance(x, pa.ChunkedArray):
        null = (np.concatenate([np.asarray(c.is_null()) for c in x.chunks])
                if x.num_chunks else np.zeros(0, dtype=bool))
    else:
        null = np.asarray(x.is_null())
    filled = x.fill_null(0) if null.any() else x
    if isinstance(filled, pa.ChunkedArray):
        vals = (filled.to_numpy() if filled.num_chunks
                else np.zeros(0, dtype=x.type.to_pandas_dtype()))
    else:
        vals = filled.to_numpy(zero_copy_only=False)
    return np.asarray(vals), null


def is_polars_128(dt: Any) -> bool:
    """True for Polars' 128-bit integer dtypes (``Int128``, ``UInt128``), which Arrow and
    NumPy have no type for."""
    pl = sys.modules["polars"]
    return any(dt == w for w in (getattr(pl, "Int128", None), getattr(pl, "UInt128", None))
               if w is not None)


def polars_wide_values(x: Any) -> tuple[Any, np.ndarray]:
    """A Polars ``Int128``/``UInt128`` Series' values (float64 with NaN at nulls, or
    :class:`bndp._values.WideValues` where some value is beyond 2^53: each then reaches
    the grid from its exact integer) and its null mask."""
    pl = sys.modules["polars"]
    null = np.asarray(x.is_null().to_numpy(), dtype=bool)
    vals = np.array(x.cast(pl.Float64).to_numpy(), dtype=np.float64)   # (a copy)
    vals[null] = np.nan
    return wide_int_column(vals, null if null.any() else None,
                           lambda pos: x.gather(np.asarray(pos, dtype=np.int64)).to_list()), null


def arrow_values(x: Any) -> tuple[Any, np.ndarray]:
    """An Arrow (Chunked)Array's values (float64 with NaN at nulls, or
    :class:`bndp._values.WideValues` for 64-bit integers beyond 2^53 and decimals) and its
    null mask."""
    pa = sys.modules["pyarrow"]
    t = x.type
    if isinstance(x, pa.ChunkedArray):
        null = (np.concatenate([np.asarray(c.is_null()) for c in x.chunks])
                if x.num_chunks else np.zeros(0, dtype=bool))
    else:
        null = np.asarray(x.is_null())
    if pa.types.is_decimal(t):
        vals = np.asarray(x.cast(pa.float64()).to_numpy(zero_copy_only=False),
                          dtype=np.float64)
        # (Arrow's decimal-to-double cast is within a few units in the last place)
        return wide_column(vals, null if null.any() else None,
                           lambda pos: x.take(pa.array(pos)).to_pylist(), ulps=4.0), null
    if pa.types.is_integer(t) and t.bit_width == 64:
        filled = x.fill_null(0) if null.any() else x
        ints = np.asarray(filled.to_numpy() if isinstance(filled, pa.ChunkedArray)
                          else filled.to_numpy(zero_copy_only=False))
        return from_ints(ints, null if null.any() else None), null
    x64 = x if pa.types.is_float64(t) else x.cast(pa.float64())
    vals = x64.to_numpy() if isinstance(x64, pa.ChunkedArray) else \
        x64.to_numpy(zero_copy_only=False)           # nulls become NaN
    return np.asarray(vals, dtype=np.float64), null


def _describe_missing(col: Column, name: str) -> str:
    assert col.missing is not None
    pos = int(np.flatnonzero(col.missing.ravel())[0])
    where = f"at position {pos}"
    if col.kind == "masked":
        where += " (masked entries are missing values)"
    if col.kind == "pandas":
        label = col._src.index[pos]
        label = label.item() if isinstance(label, np.generic) else label
        where += f" (index label {label!r})"
    n = int(col.missing.sum())
    return (f"`{name}` has {n} missing value(s) (null/NaN), the first {where}; "
            "pass nulls='keep' to leave missing values untouched")


def _columns_call(func: Callable[..., Any], ba: inspect.BoundArguments, nulls: str,
                  vname: str) -> Any:
    # the column path of `columnar` for bound arguments (the released values `vname`: NumPy,
    # pandas, Arrow or a masked array; tensors were already brought to the host as NumPy)
    col = to_numpy(ba.arguments[vname], vname)
    shape = col.values.shape
    if col.kind != "numpy" and ba.arguments.get("size") is not None:
        raise ValueError(f"`size` must be None when `{vname}` is a pandas or Arrow column "
                         "or a masked array")
    for b in ("lower", "upper"):
        if b in ba.arguments and is_column(ba.arguments[b]):
            bc = to_numpy(ba.arguments[b], b)
            if bc.missing is not None:
                pos_b = int(np.flatnonzero(bc.missing)[0])
                raise ValueError(f"`{b}` must not have missing values; got one at position {pos_b}")
            if bc.values.shape != shape:
                raise ValueError(f"`{b}` has length {bc.values.shape[0]} but `{vname}` "
                                 f"has shape {shape}")
            # public bounds: integer columns as their integers (their type takes part in
            # the sampler's integer rule), any other as their nearest doubles
            bv = bc.values
            ba.arguments[b] = (bv if isinstance(bv, np.ndarray) and bv.dtype.kind in "iu"
                               else np.asarray(approx(bv), dtype=np.float64))
    if col.missing is None:
        ba.arguments[vname] = col.values
        return col.restore(func(*ba.args, **ba.kwargs))
    if nulls == "raise":
        raise ValueError(_describe_missing(col, vname))
    # nulls="keep": draw for the present entries only, leave the rest missing
    mech = ba.arguments.get("self")
    if getattr(mech, "dim", None) is not None:
        raise ValueError("nulls='keep' is not supported by a multivariate mechanism")
    if np.ndim(getattr(mech, "lower", 0.0)) or np.ndim(getattr(mech, "upper", 0.0)):
        raise ValueError("nulls='keep' with missing values needs a mechanism with scalar "
                         "bounds (this one has per-coordinate bounds)")
    if ba.arguments.get("size") is not None:
        raise ValueError("`size` must be None with nulls='keep'")
    keep = ~col.missing
    ba.arguments[vname] = col.values[keep]
    for b in ("lower", "upper"):
        if b in ba.arguments:
            bv = np.asarray(ba.arguments[b])
            if bv.ndim > 0:
                if bv.shape != shape:
                    raise ValueError(f"nulls='keep' needs scalar `{b}` or one of the "
                                     f"value's shape {shape}; got shape {bv.shape}")
                ba.arguments[b] = bv[keep]
    # (called when every entry is missing too: the empty draw gives the result's type, so
    # an all-missing integer column comes back an integer column)
    res = func(*ba.args, **ba.kwargs)
    if isinstance(res, np.ndarray) and res.dtype.kind in "iu":
        out = np.zeros(shape, dtype=res.dtype)     # integers: missing entries 0 here
    else:
        out = np.full(shape, np.nan)
    out[keep] = res
    if col.kind == "numpy" and out.ndim == 0:
        return float(out)
    return col.restore(out)


def columnar(func: F) -> F:
    """Let a sampler take pandas/Arrow columns, masked arrays, torch tensors, array-API
    arrays and a ``nulls=`` keyword (see module doc).

    The wrapped function must take the released values as ``value`` and may take ``size``,
    ``lower``, ``upper``; it should declare ``nulls: Nulls = "raise"`` (keyword-only) for
    its signature and documentation: the wrapper consumes ``nulls`` and never passes it on.
    Plain NumPy input with ``nulls="raise"`` goes straight through (no overhead).

    A mechanism with a ``_device_sample(value, **other_arguments)`` method draws natively
    on a torch tensor's device: it is called for a tensor on a device other than the CPU
    that holds no missing value (the gradient mechanisms, see
    :mod:`bndp.mechanisms._torch_noise`). Everything else that is a tensor or an
    array-API array is drawn on the host (:mod:`bndp._columns._arrays`).
    """
    sig = inspect.signature(func)
    params = list(sig.parameters)
    vname = "value"
    pos = params.index(vname)
    call_sig = sig.replace(parameters=[p for p in sig.parameters.values() if p.name != "nulls"])

    @functools.wraps(func)
    def wrapper(*args: Any, nulls: str = "raise", **kwargs: Any) -> Any:
        if nulls == "raise":
            v = args[pos] if len(args) > pos else kwargs.get(vname)
            tv = type(v)
            if (tv is float or tv is np.ndarray or tv is int or tv is np.float64) and (
                    not kwargs or (type(kwargs.get("lower")) in _PLAIN_BOUND
                                   and type(kwargs.get("upper")) in _PLAIN_BOUND)):
                return func(*args, **kwargs)    # the common case, decided by exact types
            if isinstance(v, _PLAIN) and not isinstance(v, np.ma.MaskedArray) and not any(
                    is_column(kwargs.get(b)) or _arrays.is_foreign(kwargs.get(b))
                    for b in ("lower", "upper")):
                return func(*args, **kwargs)
        check_nulls(nulls)
        ba = call_sig.bind(*args, **kwargs)
        v = ba.arguments[vname]
        device_sample = getattr(ba.arguments.get("self"), "_device_sample", None)
        if device_sample is not None and _arrays.on_device(v):
            rest = {k: a for k, a in ba.arguments.items() if k not in ("self", vname)}
            return device_sample(v, **rest)
        # tensors and array-API arrays: drawn on the host as NumPy, returned in their kind
        fv = _arrays.foreign(v, vname)
        if fv is not None:
            ba.arguments[vname] = fv.values
        for b in ("lower", "upper"):
            if b in ba.arguments:
                ba.arguments[b] = _arrays.host_values(ba.arguments[b], b)
        out = _columns_call(func, ba, nulls, vname)
        return out if fv is None else fv.restore(out)

    if "nulls" in sig.parameters:
        return wrapper  # type: ignore[return-value]
    doc = wrapper.__doc__ or ""
    if "nulls" not in doc:
        wrapper.__doc__ = doc.rstrip() + (
            "\n\n        Columns: ``value`` (and per-row ``lower``/``upper`` where accepted) may"
            "\n        be a pandas Series or a pyarrow Array/ChunkedArray; the result is of the"
            "\n        same kind (Series keep their index and name). ``nulls=\"raise\"`` (default)"
            "\n        refuses missing values, ``nulls=\"keep\"`` leaves them missing, untouched."
            "\n        ``workers`` (default 1; -1 for every CPU) splits large outputs across"
            "\n        threads, each drawing from its own child stream spawned from ``rng``."
            "\n        Tensors: ``value`` may be a torch tensor or an array-API array; the"
            "\n        result has its type, device, shape and floating dtype.\n"
        )
    wrapper.__signature__ = sig.replace(parameters=[  # type: ignore[attr-defined]
        *sig.parameters.values(),
        inspect.Parameter("nulls", inspect.Parameter.KEYWORD_ONLY, default="raise"),
    ]) if "nulls" not in sig.parameters else sig
    return wrapper  # type: ignore[return-value]
