//! A small row-oriented front end over Arrow array builders, so a table is
//! declared once (names, kinds, descriptions) and filled row by row in that
//! order; its Parquet file is written row group by row group by the
//! `parquet` crate (writer.rs).

use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::ArrayRef;

pub use crate::schema::{Codec, ColumnDef, Kind, SCHEMA_VERSION, SCHEMA_VERSION_KEY, TIME_ZONE, ZSTD_LEVEL};
use crate::writer::TableWriter;

/// The columns of a table being filled: one list of builders per kind, and
/// the schema order as (kind, index in its list).
struct Builders {
    f64s: Vec<Float64Builder>,
    i64s: Vec<Int64Builder>,
    i32s: Vec<Int32Builder>,
    times: Vec<TimestampMicrosecondBuilder>,
    bools: Vec<BooleanBuilder>,
    ids: Vec<StringBuilder>,
    labels: Vec<StringBuilder>,
    order: Vec<(Kind, usize)>,
}

/// How many columns of each kind, or how many of each a row has filled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct PerKind {
    f64: usize,
    i64: usize,
    i32: usize,
    time: usize,
    bool: usize,
    id: usize,
    label: usize,
}

impl PerKind {
    fn of(&mut self, kind: Kind) -> &mut usize {
        match kind {
            Kind::F64 => &mut self.f64,
            Kind::I64 => &mut self.i64,
            Kind::I32 => &mut self.i32,
            Kind::Time => &mut self.time,
            Kind::Bool => &mut self.bool,
            Kind::Id => &mut self.id,
            Kind::Str => &mut self.label,
        }
    }
}

/// Bytes reserved per row for a string column's values.
const STRING_BYTES: usize = 16;

impl Builders {
    fn new(kinds: impl IntoIterator<Item = Kind>, rows: usize) -> (Builders, PerKind) {
        let mut count = PerKind::default();
        let order = kinds
            .into_iter()
            .map(|k| {
                let n = count.of(k);
                *n += 1;
                (k, *n - 1)
            })
            .collect();
        let builders = Builders {
            f64s: (0..count.f64).map(|_| Float64Builder::with_capacity(rows)).collect(),
            i64s: (0..count.i64).map(|_| Int64Builder::with_capacity(rows)).collect(),
            i32s: (0..count.i32).map(|_| Int32Builder::with_capacity(rows)).collect(),
            times: (0..count.time).map(|_| times(rows)).collect(),
            bools: (0..count.bool).map(|_| BooleanBuilder::with_capacity(rows)).collect(),
            ids: (0..count.id).map(|_| strings(rows)).collect(),
            labels: (0..count.label).map(|_| strings(rows)).collect(),
            order,
        };
        (builders, count)
    }

    /// The columns' arrays in schema order; the builders are left empty
    /// (with no room reserved: replacing each by one with room for a whole
    /// row group measured slower, as every table's builders then reserve
    /// it after their last group too).
    fn finish(&mut self) -> Vec<ArrayRef> {
        let arrays = self.order.iter().map(|&(kind, i)| -> ArrayRef {
            match kind {
                Kind::F64 => Arc::new(self.f64s[i].finish()),
                Kind::I64 => Arc::new(self.i64s[i].finish()),
                Kind::I32 => Arc::new(self.i32s[i].finish()),
                Kind::Time => Arc::new(self.times[i].finish()),
                Kind::Bool => Arc::new(self.bools[i].finish()),
                Kind::Id => Arc::new(self.ids[i].finish()),
                Kind::Str => Arc::new(self.labels[i].finish()),
            }
        });
        arrays.collect()
    }
}

fn strings(rows: usize) -> StringBuilder {
    StringBuilder::with_capacity(rows, rows * STRING_BYTES)
}

fn times(rows: usize) -> TimestampMicrosecondBuilder {
    TimestampMicrosecondBuilder::with_capacity(rows).with_timezone(TIME_ZONE)
}

/// The columns of a table being filled, and its rows so far. Rows are
/// appended through `row()`, column after column, or a run at a time
/// through `rows()`.
pub struct TableBuilder {
    columns: Builders,
    /// The columns of each kind.
    kinds: PerKind,
    rows: usize,
}

/// One row: the typed calls in column order, then `end()`, which checks
/// that every column got a value. Each call goes to the next column of its
/// kind (the k-th `f64()` of a row to the table's k-th F64 column), so a
/// value reaches its builder with no check of the kind: it can only land
/// in a column of its own kind. A row that fills some column twice or not
/// at all is caught in debug builds at `end()`, and in every build when
/// its row group is written (each column must have exactly the group's
/// rows). The row is a value whose cursor lives in registers: when a row
/// is filled within one function, every column's position is a constant
/// there (docs/performance-history.md, analyzer step 24).
#[must_use = "a row is added by end()"]
pub struct Row<'a> {
    t: &'a mut TableBuilder,
    /// The columns of each kind filled so far.
    cursor: PerKind,
}

impl TableBuilder {
    /// A builder with room for `rows` rows before its buffers grow.
    pub fn new(columns: &[ColumnDef], rows: usize) -> TableBuilder {
        let (columns, kinds) = Builders::new(columns.iter().map(|&(_, k, _)| k), rows);
        TableBuilder { columns, kinds, rows: 0 }
    }

    #[inline(always)]
    pub fn row(&mut self) -> Row<'_> {
        Row { t: self, cursor: PerKind::default() }
    }
}

/// A `Row` method per kind held by a primitive builder: the value
/// appended, or a null.
macro_rules! plain_cells {
    ($($kind:ident: $list:ident),*) => {$(
        #[inline(always)]
        pub fn $kind(mut self, v: Option<$kind>) -> Self {
            self.t.columns.$list[self.cursor.$kind].append_option(v);
            self.cursor.$kind += 1;
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

impl Row<'_> {
    plain_cells!(f64: f64s, i64: i64s, i32: i32s, bool: bools);

    /// A point in time (`Kind::Time`), in nanoseconds since the epoch.
    #[inline(always)]
    pub fn time_ns(mut self, v: Option<i64>) -> Self {
        self.t.columns.times[self.cursor.time].append_option(v.map(micros));
        self.cursor.time += 1;
        self
    }
    /// A string nearly unique per row (`Kind::Id`).
    #[inline(always)]
    pub fn id(mut self, v: Option<&str>) -> Self {
        self.t.columns.ids[self.cursor.id].append_option(v);
        self.cursor.id += 1;
        self
    }
    /// A label (`Kind::Str`).
    #[inline(always)]
    pub fn str(mut self, v: Option<&str>) -> Self {
        self.t.columns.labels[self.cursor.label].append_option(v);
        self.cursor.label += 1;
        self
    }
    #[inline(always)]
    pub fn end(self) {
        debug_assert_eq!(self.cursor, self.t.kinds, "a row fills every column once");
        self.t.rows += 1;
    }
}

impl TableBuilder {
    /// `n` rows without nulls, filled a column at a time: for runs of rows
    /// that share most values (a connection's samples), through
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

    /// The columns' arrays and their row count, for writing (which empties
    /// the builders).
    fn take_group(&mut self) -> (Vec<ArrayRef>, usize) {
        (self.columns.finish(), std::mem::take(&mut self.rows))
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
            let b = &mut self.t.columns.$list[self.cursor.$kind];
            for x in v {
                b.append_value(x);
            }
            self.cursor.$kind += 1;
            self
        }
    )*};
}

impl Rows<'_> {
    /// The same number in every row.
    #[inline(always)]
    pub fn i64_all(&mut self, v: i64) -> &mut Self {
        self.t.columns.i64s[self.cursor.i64].append_value_n(v, self.n);
        self.cursor.i64 += 1;
        self
    }
    /// The same id in every row (a connection's uid in its samples).
    #[inline(always)]
    pub fn id_all(&mut self, v: &str) -> &mut Self {
        self.t.columns.ids[self.cursor.id].append_value_n(v, self.n);
        self.cursor.id += 1;
        self
    }
    /// Label `a` in the first `first` rows, `b` in the rest (a connection's
    /// samples of both sides as one run).
    #[inline(always)]
    pub fn label_split(&mut self, first: usize, a: &str, b: &str) -> &mut Self {
        assert!(first <= self.n, "a split within the rows");
        let d = &mut self.t.columns.labels[self.cursor.label];
        d.append_value_n(a, first);
        d.append_value_n(b, self.n - first);
        self.cursor.label += 1;
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
/// (~30 MB for connections.parquet's 60 columns), then encoded; readers get
/// row groups to skip or split work by.
pub const ROW_GROUP_ROWS: usize = 64 * 1024;

/// Writes one Parquet file from a table builder, a row group every
/// `group_rows` rows, so memory stays bounded.
pub struct ParquetTable {
    path: PathBuf,
    builder: TableBuilder,
    file: TableWriter,
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
            file: TableWriter::create(path, &all, late.len(), codec)?,
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
            self.file.write_group(&columns, rows)?;
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
            self.file.write_group(&columns, rows)?;
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
        let groups = self.file.group_rows();
        Ok(LateColumns { path: self.path, file: self.file, builder: self.late, groups, next: 0 })
    }
}

/// The late columns of a `ParquetTable` (`into_late`): filled row by row,
/// as many rows per row group as the group has (`group_rows`), each group
/// ended with `end_group`, which writes the whole row group; `close` then
/// writes the footer.
pub struct LateColumns {
    path: PathBuf,
    file: TableWriter,
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

    /// Writes the next row group: its other columns, encoded earlier, and
    /// the late ones filled since the last group (as many rows as it has).
    pub fn end_group(&mut self) -> io::Result<()> {
        let (columns, rows) = self.builder.take_group();
        self.file.write_late(self.next, &columns, rows)?;
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
