"""The command line's I/O: input formats, CSV/Parquet blocks through Arrow, the output's kind and
atomic replacement, the progress bar and signal handling."""

from __future__ import annotations

import csv
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from typing import Any

import numpy as np

from .._values import wide_column
from ._errors import CLIError, DataError, _Terminated, _cell_error


# ------------------------------------------------------------------------------------------
# progress bar
# ------------------------------------------------------------------------------------------
class _Progress:
    """A one-line progress bar on stderr by rows written, redrawn at most 5 times a second.

    ``total`` is the number of data rows (0 when unknown: no percentage is shown). Each
    redraw pads to the previous line's width, so no stale characters remain."""

    def __init__(self, total: float, unit: str, enabled: bool) -> None:
        self.total = float(total) if total else 0.0
        self.unit = unit
        self.enabled = enabled
        self.t0 = time.monotonic()
        self.last = 0.0
        self.drawn = False
        self.width = 0

    def update(self, done: float, rows: int, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.2:
            return
        self.last = now
        el = now - self.t0
        rate = rows / el if el > 0 else 0.0
        if self.total > 0:
            frac = min(1.0, rows / self.total)
            if not force:
                frac = min(frac, 0.999)  # 100 % only once the output is complete
            fill = int(frac * 30)
            bar = f"[{'#' * fill}{'.' * (30 - fill)}] {100 * frac:5.1f}% "
        else:
            bar = ""
        text = f"bndp: {bar}{rows:,} rows, {el:6.1f} s, {rate:,.0f} rows/s"
        pad = max(0, self.width - len(text))
        sys.stderr.write("\r" + text + " " * pad)
        sys.stderr.flush()
        self.width = len(text)
        self.drawn = True

    def close(self, done: float, rows: int) -> None:
        if self.enabled:
            if self.total <= 0 or rows >= self.total:
                self.total = float(rows)
            self.update(rows, rows, force=True)
            sys.stderr.write("\n")
            sys.stderr.flush()


def _progress_enabled(mode: str) -> bool:
    if mode == "always":
        return True
    if mode == "never":
        return False
    return sys.stderr.isatty()


def _count_lines(path: str) -> int:
    """Line breaks in a file (a fast count of the data rows of a CSV, plus the header)."""
    n = 0
    last = b"\n"
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 22)
            if not chunk:
                break
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


# ------------------------------------------------------------------------------------------
# privatize
# ------------------------------------------------------------------------------------------
_FORMATS = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet",
            ".pq": "parquet", ".parq": "parquet"}


def _guess_format(path: str) -> str | None:
    return _FORMATS.get(os.path.splitext(path)[1].lower())


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _arrow_f64(pa: Any, values: np.ndarray, missing: np.ndarray | None) -> Any:
    """A NumPy float64 (or uint8) array as an Arrow array, nulls where ``missing``, built from
    buffers (``pa.array`` on NumPy input loads pandas when it is installed, which alone
    costs more memory than a chunk)."""
    values = np.ascontiguousarray(values)
    typ = pa.float64() if values.dtype == np.float64 else pa.uint8()
    validity = None
    nulls = 0
    if missing is not None and missing.any():
        validity = pa.py_buffer(np.packbits(~missing, bitorder="little"))
        nulls = int(missing.sum())
    return pa.Array.from_buffers(typ, len(values), [validity, pa.py_buffer(values)],
                                 null_count=nulls)


def _first_unparsable(arr: Any, pc: Any, pa: Any) -> int:
    """Index of the first cell of a string array that does not parse as a float (bisection
    on slices: O(log n) casts, only on the error path)."""
    lo, hi = 0, len(arr)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            pc.cast(arr.slice(lo, mid - lo), pa.float64())
        except (pa.ArrowInvalid, ValueError):
            hi = mid
        else:
            lo = mid
    return lo


def _read_header(path: str, delimiter: str, shown: str | None = None
                 ) -> tuple[list[str], int, bool]:
    """The header, an upper bound of its length in bytes, and whether the file has no
    line after it (a header-only file, with or without a final newline)."""
    shown = shown or path
    with open(path, "r", newline="", encoding="utf-8-sig") as f:
        reader = csv.reader(f, delimiter=delimiter)
        try:
            header = next(reader, None)
            only_header = header is not None and next(reader, None) is None
        except (csv.Error, UnicodeDecodeError) as exc:
            raise DataError(f"{shown}: cannot read the CSV header: {exc}") from None
    if not header:
        raise DataError(f"{shown}: empty file (no header line)")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise DataError(f"{shown}: duplicate column name(s) in the header: {', '.join(dup)}")
    return header, 2 * len(_csv_header(header, delimiter)) + 64, only_header


def _csv_header(header: list[str], delimiter: str) -> bytes:
    import io

    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="\n").writerow(header)
    return buf.getvalue().encode("utf-8")


def _csv_lines(cols: list[Any], delimiter: str, pa: Any, pc: Any) -> bytes | memoryview:
    """Rows of string columns as CSV bytes, quoting only the cells that need it (those with
    the delimiter, a quote or a line break), as the csv module's QUOTE_MINIMAL does."""
    special = "[" + "".join("\\" + c if c in "\\^]-[" else c
                            for c in (delimiter, '"')) + "\r\n]"
    quoted = []
    for c in cols:
        need = pc.match_substring_regex(c, special)
        if pc.any(need).as_py():
            esc = pc.binary_join_element_wise('"', pc.replace_substring(c, '"', '""'), '"', "")
            c = pc.if_else(need, esc, c)
        quoted.append(c)
    lines = pc.binary_join_element_wise(*quoted, delimiter)
    lines = pc.binary_join_element_wise(lines, "", "\n")
    if len(lines) == 0:
        return b""
    width = np.int64 if lines.type == pa.large_string() else np.int32
    offsets = np.frombuffer(lines.buffers()[1], dtype=width)
    a, b = int(offsets[lines.offset]), int(offsets[lines.offset + len(lines)])
    return memoryview(lines.buffers()[2])[a:b]


def _parse_numbers(text: Any, name: str, row0: int, path: str, pa: Any, pc: Any,
                   allow_empty: bool, nulls: str, exact: bool = False
                   ) -> tuple[Any, np.ndarray]:
    """A block of CSV cells (strings) as float64 (each cell's nearest double) and the mask
    of empty cells. ``exact``: released values, returned as
    :class:`bndp._values.WideValues` (the cells' decimal text is their exact value: each
    is rounded onto the grid once, from the text)."""
    trimmed = pc.utf8_trim_whitespace(text)
    empty = np.asarray(pc.equal(trimmed, ""))
    filled = (pc.if_else(_arrow_f64(pa, empty.view(np.uint8), None).cast(pa.bool_()),
                         "0", trimmed) if empty.any() else trimmed)
    try:
        nums = pc.cast(filled, pa.float64())
    except (pa.ArrowInvalid, ValueError):
        i = _first_unparsable(filled, pc, pa)
        if (not allow_empty or nulls == "raise") and empty[:i].any():
            i = int(np.flatnonzero(empty)[0])
            raise _cell_error(path, row0 + i, name, "missing value (empty cell); pass --nulls "
                              "keep to leave missing values untouched") from None
        # (the cell's text is data: not quoted)
        raise _cell_error(path, row0 + i, name, "the cell is not a number") from None
    vals = np.asarray(nums.to_numpy(zero_copy_only=False), dtype=np.float64)
    if not allow_empty and empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise _cell_error(path, row0 + i, name, "empty cell in a column of per-row bounds")
    if exact:   # (a margin over Arrow's parse, which is correctly rounded)
        return wide_column(vals, empty if empty.any() else None,
                           lambda pos: trimmed.take(pa.array(pos)).to_pylist(),
                           ulps=2.0), empty
    return vals, empty


def _arrow_msg(exc: BaseException, block: int) -> str:
    """Arrow's CSV reading error in this command's words, without the text of the row that
    Arrow quotes (``Expected 2 columns, got 3: <the row>``): a row is data."""
    msg = " ".join(str(exc).split())
    if "straddl" in msg:
        return (f"a row is longer than the block of {block:,} bytes parsed at a time; pass a "
                "larger --block-size")
    return arrow_without_cells(msg)


def arrow_without_cells(msg: str) -> str:
    """An Arrow CSV reading message without the data it quotes: the row text of a parse
    error (``Expected 2 columns, got 3: <the row>``) and the cell of a conversion error
    (``invalid value '<the cell>'``)."""
    if "CSV parse error" in msg:
        m = re.search(r"(Row #\d+: )?Expected \d+ columns?, got \d+", msg)
        return ("CSV parse error: " + m.group(0) + " (a row with another number of cells "
                "than the header, or an unclosed quote)") if m else "CSV parse error"
    if "conversion error" in msg:
        return re.sub(r"invalid value .*$", "a cell that is not a number", msg)
    return msg


def _normal_mode(path: str) -> None:
    """Give a temporary file (created 0600) the mode a newly created file would have."""
    if os.name == "posix":
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(path, 0o666 & ~mask)


def _remove(path: str) -> None:
    """Delete ``path`` if it can be (a temporary file left by a failed write)."""
    try:
        os.unlink(path)
    except OSError:
        pass


class Staged:
    """A release's output while it is written, before its charge is committed.

    Where the system can (Linux: ``O_TMPFILE``), an unnamed file in ``directory``: nothing
    of it can be found, and a crash (even ``kill -9``) at any point before
    :meth:`put_in_place` leaves nothing behind, so no drawn value is ever on disk under a
    name without its charge. Elsewhere a hidden file (mode 0600), removed on failure.
    :attr:`path` reads and writes it (``/proc/self/fd/N`` for an unnamed file)."""

    def __init__(self, directory: str | None, prefix: str) -> None:
        self.fd: int | None = None
        self.directory = directory or tempfile.gettempdir()
        self.prefix = prefix
        flag = getattr(os, "O_TMPFILE", 0)
        if flag and os.path.isdir("/proc/self/fd"):
            try:
                self.fd = os.open(self.directory, flag | os.O_RDWR, 0o600)
            except OSError:  # a file system without unnamed files
                self.fd = None
        if self.fd is not None:
            self.path = f"/proc/self/fd/{self.fd}"
        else:
            fd, self.path = tempfile.mkstemp(prefix=prefix, suffix=".bndp-partial",
                                             dir=self.directory)
            os.close(fd)

    @property
    def unnamed(self) -> bool:
        return self.fd is not None

    def put_in_place(self, final: str) -> None:
        """Give the file the mode a new file gets and the name ``final`` (atomically
        replacing what was there); call only once its charge is committed."""
        _normal_mode(self.path)
        if self.fd is None:
            os.replace(self.path, final)
            self.path = ""
            return
        # a fresh hidden name, linked then renamed over ``final``; linkat with
        # AT_SYMLINK_FOLLOW (given a directory descriptor, os.link calls linkat) names the
        # file behind /proc/self/fd/N, not the link
        dfd = os.open(self.directory, os.O_RDONLY)
        try:
            for _ in range(100):
                base = f"{self.prefix}{os.urandom(6).hex()}.bndp-out"
                try:
                    os.link(self.path, base, dst_dir_fd=dfd, follow_symlinks=True)
                    break
                except FileExistsError:  # pragma: no cover - 48 random bits
                    continue
            else:  # pragma: no cover
                raise OSError(f"cannot name the output in {self.directory}")
        finally:
            os.close(dfd)
        name = os.path.join(self.directory, base)
        try:
            os.replace(name, final)
        except BaseException:
            _remove(name)
            raise
        self.discard()

    def discard(self) -> None:
        """Drop the file (idempotent)."""
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)
            self.path = ""
        elif self.path:
            _remove(self.path)
            self.path = ""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated()


def _output_kind(dst: str) -> tuple[str, str | None]:
    """How to write ``dst``: ``("file", path)`` (a temporary file renamed onto ``path``; a
    symbolic link is followed, so the link stays and its target gets the data) or
    ``("stream", path)`` (``-``, a FIFO, a character device such as /dev/stdout: written
    into at the end, never replaced)."""
    if dst == "-":
        return "stream", None
    special = ("/dev/", "/proc/")
    if os.path.abspath(dst).startswith(special) or os.path.realpath(dst).startswith(special):
        return "stream", dst  # /dev/stdout, /dev/fd/N, /proc/self/fd/N: the process's files
    if os.path.lexists(dst):
        try:
            st = os.stat(dst)  # follows links
        except OSError:
            st = None  # a dangling link: create its target
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise CLIError(f"{dst}: is a directory; give the output file name")
        if st is not None and not stat.S_ISREG(st.st_mode):
            return "stream", dst
        return "file", os.path.realpath(dst)
    return "file", dst


def _spool_input(src: str) -> "Staged":
    """Copy stdin (``-``) or a non-regular input (a pipe) to a temporary file (unnamed
    where the system has them: the true data never stay on disk after a crash)."""
    spool = Staged(None, ".bndp-input.")
    try:
        with open(spool.path, "wb") as out:
            if src == "-":
                shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
            else:
                with open(src, "rb") as f:
                    shutil.copyfileobj(f, out, 1 << 20)
    except BaseException:
        spool.discard()
        raise
    return spool


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _save_figure(fig: Any, output: str, dpi: int) -> None:
    """Write a matplotlib figure to ``output`` through a temporary file in its directory,
    renamed into place only on success; the figure is closed."""
    import matplotlib.pyplot as plt

    out_dir = os.path.dirname(os.path.abspath(output))
    fd, tmp = tempfile.mkstemp(prefix=".bndp-plot.", suffix=os.path.splitext(output)[1],
                               dir=out_dir)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=dpi)
        _normal_mode(tmp)
        os.replace(tmp, output)
    except BaseException:
        _remove(tmp)
        raise
    finally:
        plt.close(fig)
