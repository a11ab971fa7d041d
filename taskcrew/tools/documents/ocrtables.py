"""Table-like structure in OCR'd lines, found from the words' boxes alone: a run of lines that share
a *gutter* — a band of x no word of any of them crosses, with words on both sides in at least
:data:`MIN_ROWS` of them. A two-column header (``Bluebird Software SRL | Invoice number: | BB-2291``)
and an item table (``Item | Qty | Unit | Price | Amount``) are both such runs, whatever their text.

What it is used for (:mod:`ocr`):

- each word gets the number of its column, so a line is joined with a column break between columns
  however narrow the gutter (``Qty   Unit``, not ``Qty Unit``);
- a column whose first reading is doubtful (a cell missing where the other rows have one, a word
  under :data:`SURE`) is read again as a strip of its own on one sheet (``--psm 6``): nothing from
  the next column can be merged into it or crowd it out. Each cell keeps the reading tesseract is
  surer of. A table read with confidence costs no second pass.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from taskcrew.tools.documents.ocrlines import UNCERTAIN_BELOW, Line, Word

MIN_ROWS = 3  # lines with words on both sides of a gutter before it counts as one
GUTTER = 0.6  # a gutter is at least this many line heights wide (a space between words is ~0.35)
SPACES = 1.8  # and this many times as wide as the lines' usual space between words
ROW_GAP = 2.5  # lines further apart than this many heights belong to different tables
SURE = 75  # a table column whose words are all at least this sure, and no cell missing, is not read again


@dataclass
class Table:
    rows: list[int]  # indices of the lines that make it, top to bottom
    cuts: list[float]  # x of each gutter's middle, left to right: columns lie between them
    box: tuple[int, int, int, int]

    def column(self, word: Word) -> int:
        middle = (word.left + word.right) / 2
        return sum(middle > cut for cut in self.cuts)

    def strips(self, width: int) -> list[tuple[int, int]]:
        """(left, right) of each column, from edge to edge of the table."""
        edges = [self.box[0], *(round(c) for c in self.cuts), self.box[2]]
        return [(max(0, a), min(width, b)) for a, b in itertools.pairwise(edges)]


def find_tables(lines: list[Line]) -> list[Table]:
    """The table-like runs of lines (top to bottom), each with its gutters."""
    order = sorted((i for i, line in enumerate(lines) if line.words), key=lambda i: lines[i].box[1])
    tables: list[Table] = []
    group: list[int] = []
    for index in order:
        if group and _gutters(lines, [*group, index]) and not _apart(lines[group[-1]], lines[index]):
            group.append(index)
            continue
        _close(lines, group, tables)
        group = [index]
    _close(lines, group, tables)
    return tables


def _apart(above: Line, below: Line) -> bool:
    height = max(_height(above), _height(below))
    return below.box[1] - above.box[3] > ROW_GAP * height


def _height(line: Line) -> float:
    heights = sorted(w.height for w in line.words)
    return float(heights[len(heights) // 2])


def _close(lines: list[Line], group: list[int], tables: list[Table]) -> None:
    cuts = _gutters(lines, group)
    if len(group) >= MIN_ROWS and cuts:
        boxes = [lines[i].box for i in group]
        box = (
            min(b[0] for b in boxes),
            min(b[1] for b in boxes),
            max(b[2] for b in boxes),
            max(b[3] for b in boxes),
        )
        tables.append(Table(rows=group, cuts=cuts, box=box))


def _gutters(lines: list[Line], group: list[int]) -> list[float]:
    """Middles of the gutters of these lines: bands wide enough that no word crosses, with words on
    both sides in at least MIN_ROWS lines (or in every line while the run is shorter than that)."""
    words = [w for i in group for w in lines[i].words]
    if not words:
        return []
    height = sorted(max(w.height for w in lines[i].words) for i in group)[len(group) // 2]
    spaces = sorted(
        b.left - a.right
        for i in group
        for a, b in itertools.pairwise(lines[i].words)
        if 0 <= b.left - a.right < height
    )
    space = spaces[len(spaces) // 2] if spaces else 0
    wide = max(GUTTER * height, SPACES * space)
    spans = sorted((w.left, w.right) for w in words)
    free: list[tuple[int, int]] = []
    reach = spans[0][1]
    for left, right in spans[1:]:
        if left - reach >= wide:
            free.append((reach, left))
        reach = max(reach, right)
    need = min(MIN_ROWS, len(group))
    cuts = []
    for a, b in free:
        both = sum(
            1
            for i in group
            if any(w.right <= a for w in lines[i].words) and any(w.left >= b for w in lines[i].words)
        )
        if both >= need:
            cuts.append((a + b) / 2)
    return cuts


def mark_columns(lines: list[Line], tables: list[Table]) -> None:
    """Each word of a table's lines told its column (a line is joined with breaks between columns)."""
    for table in tables:
        for i in table.rows:
            for word in lines[i].words:
                word.column = table.column(word)


def doubtful(lines: list[Line], table: Table) -> list[int]:
    """The columns of a table worth reading again: those with a word under SURE, or with a cell left
    empty where all the other rows fill it (a value the first pass lost)."""
    columns = set()
    filled = [{table.column(w) for w in lines[i].words} for i in table.rows]
    for i in table.rows:
        columns |= {table.column(w) for w in lines[i].words if w.conf < SURE}
    for column in range(len(table.cuts) + 1):
        count = sum(column in cells for cells in filled)
        if count == len(table.rows) - 1 and count >= MIN_ROWS:
            columns.add(column)
    return sorted(columns)


def merge(
    lines: list[Line],
    table: Table,
    columns: list[int],
    again: list[Word],
    score: Callable[[list[Word]], float],
) -> list[Line]:
    """The table's lines with each cell (line × column) read the way tesseract is surer of: the first
    reading, or the column-by-column one (``again``, in page coordinates). A cell the first reading
    left empty takes the second reading's words if they are not uncertain."""
    out = list(lines)
    for i in table.rows:
        line = lines[i]
        top, bottom = line.box[1], line.box[3]
        mine = [w for w in again if top <= w.top + w.height / 2 <= bottom]
        words: list[Word] = []
        for column in range(len(table.cuts) + 1):
            first = [w for w in line.words if table.column(w) == column]
            if column not in columns:
                words += first
                continue
            second = [w for w in mine if table.column(w) == column]
            if not first:
                take = second if second and min(w.conf for w in second) >= UNCERTAIN_BELOW else []
            else:
                take = second if second and score(second) > score(first) else first
            for word in take:
                word.column = column
            words += take
        words += [w for w in line.words if w not in words and _outside(table, w)]
        words.sort(key=lambda w: w.left)
        out[i] = Line(block=line.block, words=words)
    return out


def _outside(table: Table, word: Word) -> bool:
    return word.right < table.box[0] or word.left > table.box[2]
