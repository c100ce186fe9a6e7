//! A small row-oriented front end over column vectors, so a table is
//! declared once (names, kinds, descriptions) and filled row by row in that
//! order, and a Parquet file written from it row group by row group by our
//! own writer (file.rs; docs/decisions/0002-own-parquet-writer.md).

use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::column::{Columns, PerKind, Plain};
use crate::file::FileWriter;
pub use crate::schema::{Codec, ColumnDef, Kind, SCHEMA_VERSION, SCHEMA_VERSION_KEY, TIME_ZONE, ZSTD_LEVEL};

/// The columns of a table being filled, and its rows so far. Rows are
/// appended through `row()`, column after column, or a run at a time
/// through `rows()`.
pub struct TableBuilder {
    columns: Columns,
    /// The columns of each kind.
    kinds: PerKind,
    rows: usize,
}

/// One row: the typed calls in column order, then `end()`, which checks
/// that every column got a value. Each call goes to the next column of its
/// kind (the k-th `f64()` of a row to the table's k-th F64 column), so a
/// value reaches its vector with no check of the kind: it can only land in
/// a column of its own kind. A row that fills some column twice or not at
/// all is caught in debug builds at `end()`, and in every build when its
/// row group is written (each column must have exactly the group's rows):
/// callgrind, tcpmix 300 k packets, 462.0 M -> 457.7 M instructions
/// (a008c85). The row is a value whose cursor lives in registers: when a
/// row is filled within one function, every column's position is a
/// constant there, and a cell costs its vector's push: 481.0 M -> 473.9 M
/// (d457f74; both docs/performance-history.md, analyzer step 24).
#[must_use = "a row is added by end()"]
pub struct Row<'a> {
    t: &'a mut TableBuilder,
    /// The columns of each kind filled so far.
    cursor: PerKind,
}

impl TableBuilder {
    /// A builder with room for `rows` rows before its vectors grow.
    pub fn new(columns: &[ColumnDef], rows: usize) -> TableBuilder {
        let columns = Columns::new(columns.iter().map(|&(_, k, _)| k), rows);
        TableBuilder { kinds: columns.per_kind(), columns, rows: 0 }
    }

    #[inline(always)]
    pub fn row(&mut self) -> Row<'_> {
        Row { t: self, cursor: PerKind::default() }
    }
}

/// A `Row` method per kind stored as a plain vector: the value pushed, or
/// the row marked null.
macro_rules! plain_cells {
    ($($kind:ident: $list:ident),*) => {$(
        #[inline(always)]
        pub fn $kind(mut self, v: Option<$kind>) -> Self {
            let c = &mut self.t.columns.$list[self.cursor.$kind];
            self.cursor.$kind += 1;
            match v {
                Some(v) => c.values.push(v),
                None => c.null(self.t.rows),
            }
            self
        }
    )*};
}

/// Nanoseconds since the epoch as the microseconds a `Kind::Time` column
/// holds, rounded down.
#[inline(always)]
fn micros(ns: i64) -> i64 {
    ns.div_euclid(1000)
}

/// A string's PLAIN form (u32 LE length, bytes), appended to a `Kind::Id`
/// column's values.
#[inline(always)]
fn push_plain(values: &mut Plain, v: &str) {
    let len = u32::try_from(v.len()).expect("a string is shorter than 4 GiB");
    values.bytes.extend_from_slice(&len.to_le_bytes());
    values.bytes.extend_from_slice(v.as_bytes());
    values.count += 1;
}

impl Row<'_> {
    plain_cells!(f64: f64s, i64: i64s, i32: i32s, bool: bools);

    /// A point in time (`Kind::Time`), in nanoseconds since the epoch.
    #[inline(always)]
    pub fn time_ns(mut self, v: Option<i64>) -> Self {
        let c = &mut self.t.columns.times[self.cursor.time];
        self.cursor.time += 1;
        match v {
            Some(v) => c.values.push(micros(v)),
            None => c.null(self.t.rows),
        }
        self
    }
    /// A string nearly unique per row (`Kind::Id`).
    #[inline(always)]
    pub fn id(mut self, v: Option<&str>) -> Self {
        let c = &mut self.t.columns.ids[self.cursor.id];
        self.cursor.id += 1;
        match v {
            Some(v) => push_plain(&mut c.values, v),
            None => c.null(self.t.rows),
        }
        self
    }
    /// A label (`Kind::Str`): interned by its content, with no hashing when
    /// the column has seen the same string (address) lately.
    #[inline(always)]
    pub fn str(mut self, v: Option<&str>) -> Self {
        let c = &mut self.t.columns.labels[self.cursor.label];
        self.cursor.label += 1;
        match v {
            Some(v) => c.values.keys.push(c.values.dict.intern_str(v)),
            None => c.null(self.t.rows),
        }
        self
    }
    #[inline(always)]
    pub fn end(self) {
        debug_assert_eq!(self.cursor, self.t.kinds, "a row fills every column once");
        self.t.rows += 1;
    }
}

impl TableBuilder {
    /// `n` rows without nulls, filled a column at a time: each column's
    /// values go in with one reservation, not one per value. For runs of
    /// rows that share most values (a connection's samples), through
    /// `ParquetTable::extend`, which splits them at row group ends.
    #[inline(always)]
    fn rows(&mut self, n: usize) -> Rows<'_> {
        Rows { t: self, n, cursor: PerKind::default() }
    }

    pub fn len(&self) -> usize {
        self.rows
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The columns and their row count, for writing (which empties them).
    fn take_group(&mut self) -> (&mut Columns, usize) {
        (&mut self.columns, std::mem::take(&mut self.rows))
    }
}

/// `TableBuilder::rows`: the columns in order (each call to the next column
/// of its kind, as for rows), each with its `n` values, then `end()`
/// (checked as `Row::end` is).
pub struct Rows<'a> {
    t: &'a mut TableBuilder,
    n: usize,
    cursor: PerKind,
}

/// A `Rows` method per number kind: one value per row, from an iterator.
macro_rules! each_cells {
    ($($name:ident: $kind:ident => $list:ident),*) => {$(
        #[inline(always)]
        pub fn $name(&mut self, v: impl ExactSizeIterator<Item = $kind>) -> &mut Self {
            assert_eq!(v.len(), self.n, "one value per row");
            self.t.columns.$list[self.cursor.$kind].values.extend(v);
            self.cursor.$kind += 1;
            self
        }
    )*};
}

impl Rows<'_> {
    /// The same number in every row.
    #[inline(always)]
    pub fn i64_all(&mut self, v: i64) -> &mut Self {
        let b = &mut self.t.columns.i64s[self.cursor.i64].values;
        self.cursor.i64 += 1;
        b.extend(std::iter::repeat_n(v, self.n));
        self
    }
    /// The same id in every row (a connection's uid in its samples).
    #[inline(always)]
    pub fn id_all(&mut self, v: &str) -> &mut Self {
        let c = &mut self.t.columns.ids[self.cursor.id].values;
        self.cursor.id += 1;
        c.bytes.reserve(self.n * (4 + v.len()));
        for _ in 0..self.n {
            push_plain(c, v);
        }
        self
    }
    /// Label `a` in the first `first` rows, `b` in the rest (a connection's
    /// samples of both sides as one run): each interned once, and only if
    /// used, in row order, so the dictionary is the one rows would build.
    /// Callgrind, tcpmix 300 k packets: 411.2 M -> 409.7 M instructions
    /// (0867ef6; docs/performance-history.md, analyzer step 28).
    #[inline(always)]
    pub fn label_split(&mut self, first: usize, a: &str, b: &str) -> &mut Self {
        assert!(first <= self.n, "a split within the rows");
        let d = &mut self.t.columns.labels[self.cursor.label].values;
        self.cursor.label += 1;
        for (label, n) in [(a, first), (b, self.n - first)] {
            if n > 0 {
                let key = d.dict.intern_str(label);
                d.keys.extend(std::iter::repeat_n(key, n));
            }
        }
        self
    }
    each_cells!(i32_each: i32 => i32s, i64_each: i64 => i64s, f64_each: f64 => f64s, bool_each: bool => bools);
    #[inline(always)]
    fn end(self) {
        debug_assert_eq!(self.cursor, self.t.kinds, "rows fill every column once");
        self.t.rows += self.n;
    }
}

/// Rows per row group. The columns of a whole row group are kept in memory
/// (~15 MB for connections.parquet's 60 columns), then written one page per
/// column chunk; readers get row groups to skip or split work by. Was
/// 64 Ki: make bench-analyzer's 6 M-packet trace, --threads 1, 3 runs
/// alternated: peak RSS 110.7 -> 92.1 MiB, CPU 2.88 -> 2.89 s, files
/// within 1 % (docs/performance-history.md, analyzer step 35).
pub const ROW_GROUP_ROWS: usize = 32 * 1024;

/// Writes one Parquet file from a table builder, a row group every
/// `group_rows` rows, so memory stays bounded.
pub struct ParquetTable {
    path: PathBuf,
    builder: TableBuilder,
    file: FileWriter,
    /// The late columns' builder (no columns for most tables).
    late: TableBuilder,
    group_rows: usize,
}

impl ParquetTable {
    pub fn create(path: &Path, columns: &[ColumnDef], codec: Codec) -> io::Result<ParquetTable> {
        ParquetTable::with_group_rows(path, columns, codec, ROW_GROUP_ROWS)
    }

    pub fn with_group_rows(
        path: &Path,
        columns: &[ColumnDef],
        codec: Codec,
        group_rows: usize,
    ) -> io::Result<ParquetTable> {
        ParquetTable::with_late_columns(path, columns, &[], codec, group_rows)
    }

    /// A table whose file has `columns`, filled row by row, then `late`
    /// columns filled after the last row, through `into_late` (values that
    /// need the whole input, such as a connection's category).
    pub fn with_late_columns(
        path: &Path,
        columns: &[ColumnDef],
        late: &[ColumnDef],
        codec: Codec,
        group_rows: usize,
    ) -> io::Result<ParquetTable> {
        assert!(group_rows > 0, "a row group has rows");
        let all: Vec<ColumnDef> = columns.iter().chain(late).copied().collect();
        Ok(ParquetTable {
            path: path.to_path_buf(),
            builder: TableBuilder::new(columns, group_rows),
            file: FileWriter::create(path, &all, late.len(), codec)?,
            late: TableBuilder::new(late, group_rows),
            group_rows,
        })
    }

    /// The next row; call `flush_if_full()` after each `Row::end()`.
    #[inline(always)]
    pub fn row(&mut self) -> Row<'_> {
        self.builder.row()
    }

    pub fn flush_if_full(&mut self) -> io::Result<()> {
        if self.builder.len() >= self.group_rows {
            let (columns, rows) = self.builder.take_group();
            self.file.write_group(columns, rows)?;
        }
        Ok(())
    }

    /// Appends `n` rows without nulls, filled a column at a time by `fill`
    /// (`TableBuilder::rows`), once per stretch that fits in the current
    /// row group, with the stretch's range of `0..n`; row groups end where
    /// row-by-row filling would end them.
    #[inline(always)]
    pub fn extend(&mut self, n: usize, mut fill: impl FnMut(&mut Rows<'_>, Range<usize>)) -> io::Result<()> {
        let mut at = 0;
        while at < n {
            self.flush_if_full()?;
            let k = (self.group_rows - self.builder.len()).min(n - at);
            let mut rows = self.builder.rows(k);
            fill(&mut rows, at..at + k);
            rows.end();
            at += k;
        }
        self.flush_if_full()
    }

    /// Writes the last rows.
    fn write_last_group(&mut self) -> io::Result<()> {
        if !self.builder.is_empty() {
            let (columns, rows) = self.builder.take_group();
            self.file.write_group(columns, rows)?;
        }
        Ok(())
    }

    /// Writes the last rows and the footer (a table without late columns).
    pub fn close(mut self) -> io::Result<PathBuf> {
        self.write_last_group()?;
        self.file.finish()?;
        Ok(self.path)
    }

    /// Writes the last rows; the late columns are then filled row group by
    /// row group through the returned `LateColumns`.
    pub fn into_late(mut self) -> io::Result<LateColumns> {
        self.write_last_group()?;
        let groups = self.file.group_rows().collect();
        Ok(LateColumns { path: self.path, file: self.file, builder: self.late, groups, next: 0 })
    }
}

/// The late columns of a `ParquetTable` (`into_late`): filled row by row,
/// as many rows per row group as the group has (`group_rows`), each group
/// ended with `end_group`; `close` then writes the footer. Their chunks go
/// after all the others (see file.rs): nothing is copied.
pub struct LateColumns {
    path: PathBuf,
    file: FileWriter,
    builder: TableBuilder,
    /// Rows of each row group, in order; `next` is the group being filled.
    groups: Vec<usize>,
    next: usize,
}

impl LateColumns {
    /// Row counts of the row groups, in file order.
    pub fn group_rows(&self) -> &[usize] {
        &self.groups
    }

    /// The next row of the late columns.
    #[inline(always)]
    pub fn row(&mut self) -> Row<'_> {
        self.builder.row()
    }

    /// Writes the rows filled since the last group as the next row group's
    /// late chunks (they must be as many as the group's rows).
    pub fn end_group(&mut self) -> io::Result<()> {
        let (columns, rows) = self.builder.take_group();
        self.file.write_late(self.next, columns, rows)?;
        self.next += 1;
        Ok(())
    }

    /// Writes the footer; every row group must have been ended.
    pub fn close(self) -> io::Result<PathBuf> {
        assert_eq!(self.next, self.groups.len(), "every row group gets its late columns");
        self.file.finish()?;
        Ok(self.path)
    }
}
