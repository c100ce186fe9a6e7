//! A small row-oriented front end over Arrow column builders, so a table is
//! declared once (names and types) and filled row by row in that order, and
//! a Parquet file writer over it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_writer::ArrowRowGroupWriterFactory;
use parquet::arrow::ArrowWriter;
use parquet::file::writer::SerializedFileWriter;
use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    F64,
    I64,
    I32,
    /// A label from a small set (proto, state, side): dictionary-encoded.
    Str,
    /// A string nearly unique per row (uids, host addresses): written plain,
    /// since a dictionary would only cost a hash per value and then spill.
    Id,
    Bool,
}

impl Kind {
    fn data_type(self) -> DataType {
        match self {
            Kind::F64 => DataType::Float64,
            Kind::I64 => DataType::Int64,
            Kind::I32 => DataType::Int32,
            Kind::Str | Kind::Id => DataType::Utf8,
            Kind::Bool => DataType::Boolean,
        }
    }

    /// Whether Parquet should try a dictionary: only labels, whose few
    /// distinct values then cost a small index each. Ids, numbers and times
    /// are written plain: interning them cost more than the rest of the
    /// encoding (callgrind), for files only ~1.4x smaller before compression.
    fn dictionary(self) -> bool {
        self == Kind::Str
    }

    /// Whether the column carries min/max statistics (chunk and page index).
    /// Strings get none: nobody filters on the lexical range of uids,
    /// address strings or labels, and comparing every value byte by byte
    /// was the dearest part of writing them (callgrind).
    fn statistics(self) -> EnabledStatistics {
        match self {
            Kind::Id | Kind::Str => EnabledStatistics::None,
            _ => EnabledStatistics::Page,
        }
    }
}

/// Page compression. None is the default: Snappy adds ~350 instructions
/// per packet of the trace (+28 % on all output work) for files ~1.9x
/// smaller; `--compression snappy` is for profiles kept long.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Codec {
    #[default]
    None,
    Snappy,
}

impl Codec {
    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Snappy => "snappy",
        }
    }
}

/// One column's values in plain vectors: appending a value is a push (the
/// vectors are sized for a batch), and the Arrow arrays are built from them
/// once per batch. Arrow's own builders cost ~40 instructions a value here
/// (callgrind), several times this. A null stores a default value and a
/// `false` in `valid`.
struct Column {
    values: Values,
    valid: Vec<bool>,
    nulls: usize,
}

enum Values {
    F64(Vec<f64>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    /// Arrow's Utf8 layout: `offsets[i]..offsets[i + 1]` are value i's bytes.
    Str { offsets: Vec<i32>, bytes: Vec<u8> },
    Bool(Vec<bool>),
}

impl Values {
    fn empty(t: &DataType) -> Values {
        match t {
            DataType::Float64 => Values::F64(Vec::with_capacity(BATCH_ROWS)),
            DataType::Int64 => Values::I64(Vec::with_capacity(BATCH_ROWS)),
            DataType::Int32 => Values::I32(Vec::with_capacity(BATCH_ROWS)),
            DataType::Utf8 => {
                let mut offsets = Vec::with_capacity(BATCH_ROWS + 1);
                offsets.push(0);
                Values::Str { offsets, bytes: Vec::with_capacity(BATCH_ROWS * STR_BYTES) }
            }
            DataType::Boolean => Values::Bool(Vec::with_capacity(BATCH_ROWS)),
            other => unreachable!("table kinds are declared by Kind, not {other}"),
        }
    }
}

impl Column {
    fn new(t: &DataType) -> Column {
        Column { values: Values::empty(t), valid: Vec::with_capacity(BATCH_ROWS), nulls: 0 }
    }

    #[inline]
    fn mark<T: Default>(&mut self, v: Option<T>) -> T {
        self.valid.push(v.is_some());
        self.nulls += usize::from(v.is_none());
        v.unwrap_or_default()
    }

    /// The column's values as an Arrow array; the column is empty afterwards.
    fn take(&mut self, t: &DataType) -> ArrayRef {
        let values = std::mem::replace(&mut self.values, Values::empty(t));
        let valid = std::mem::replace(&mut self.valid, Vec::with_capacity(BATCH_ROWS));
        let nulls = (std::mem::take(&mut self.nulls) > 0).then(|| NullBuffer::from(valid));
        match values {
            Values::F64(v) => Arc::new(Float64Array::new(v.into(), nulls)),
            Values::I64(v) => Arc::new(Int64Array::new(v.into(), nulls)),
            Values::I32(v) => Arc::new(Int32Array::new(v.into(), nulls)),
            Values::Str { offsets, bytes } => Arc::new(StringArray::new(
                OffsetBuffer::new(offsets.into()),
                Buffer::from_vec(bytes),
                nulls,
            )),
            Values::Bool(v) => Arc::new(BooleanArray::new(BooleanBuffer::from(v), nulls)),
        }
    }
}

/// Columns declared as (name, kind); all nullable.
pub fn schema(columns: &[(&str, Kind)]) -> SchemaRef {
    Arc::new(Schema::new(
        columns.iter().map(|(n, k)| Field::new(*n, k.data_type(), true)).collect::<Vec<_>>(),
    ))
}

/// Rows are appended with the typed calls in column order, then
/// `end_row()`, which checks that every column got a value.
pub struct TableBuilder {
    schema: SchemaRef,
    columns: Vec<Column>,
    cursor: usize,
    rows: usize,
}

impl TableBuilder {
    pub fn new(schema: SchemaRef) -> TableBuilder {
        let columns = schema.fields().iter().map(|f| Column::new(f.data_type())).collect();
        TableBuilder { schema, columns, cursor: 0, rows: 0 }
    }

    #[inline]
    fn next(&mut self) -> &mut Column {
        let c = &mut self.columns[self.cursor];
        self.cursor += 1;
        c
    }

    #[inline]
    pub fn f64(&mut self, v: Option<f64>) -> &mut Self {
        let c = self.next();
        let v = c.mark(v);
        match &mut c.values {
            Values::F64(b) => b.push(v),
            _ => panic!("column {} is not f64", self.cursor - 1),
        }
        self
    }
    #[inline]
    pub fn i64(&mut self, v: Option<i64>) -> &mut Self {
        let c = self.next();
        let v = c.mark(v);
        match &mut c.values {
            Values::I64(b) => b.push(v),
            _ => panic!("column {} is not i64", self.cursor - 1),
        }
        self
    }
    #[inline]
    pub fn i32(&mut self, v: Option<i32>) -> &mut Self {
        let c = self.next();
        let v = c.mark(v);
        match &mut c.values {
            Values::I32(b) => b.push(v),
            _ => panic!("column {} is not i32", self.cursor - 1),
        }
        self
    }
    #[inline]
    pub fn str(&mut self, v: Option<&str>) -> &mut Self {
        let c = self.next();
        let v = c.mark(v);
        match &mut c.values {
            Values::Str { offsets, bytes } => {
                bytes.extend_from_slice(v.as_bytes());
                let end = i32::try_from(bytes.len()).expect("a batch's strings fit Arrow's i32 offsets");
                offsets.push(end);
            }
            _ => panic!("column {} is not a string", self.cursor - 1),
        }
        self
    }
    #[inline]
    pub fn bool(&mut self, v: Option<bool>) -> &mut Self {
        let c = self.next();
        let v = c.mark(v);
        match &mut c.values {
            Values::Bool(b) => b.push(v),
            _ => panic!("column {} is not bool", self.cursor - 1),
        }
        self
    }
    pub fn end_row(&mut self) {
        assert_eq!(self.cursor, self.columns.len(), "row filled {} of {} columns", self.cursor, self.columns.len());
        self.cursor = 0;
        self.rows += 1;
    }
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The rows so far as a batch; the builder is empty afterwards, with
    /// room for another batch.
    pub fn finish(&mut self) -> RecordBatch {
        assert_eq!(self.cursor, 0, "finish() in the middle of a row");
        let arrays: Vec<ArrayRef> =
            self.columns.iter_mut().zip(self.schema.fields()).map(|(c, f)| c.take(f.data_type())).collect();
        self.rows = 0;
        RecordBatch::try_new(self.schema.clone(), arrays).expect("columns match the schema")
    }

    pub fn len(&self) -> usize {
        self.rows
    }
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }
}

/// Rows handed to the Parquet writer at a time: the builders' buffers
/// (~64 KB a column) stay in cache and are sized once. Row groups are the
/// writer's own (up to 1 Mi rows), so this changes no file.
const BATCH_ROWS: usize = 8 * 1024;
/// Bytes reserved per string value: uids are 17, IPv4 addresses up to 15.
const STR_BYTES: usize = 16;

/// Writes one Parquet file from a table builder, handing the writer a batch
/// every `BATCH_ROWS` rows so memory stays bounded.
pub struct ParquetTable {
    path: PathBuf,
    builder: TableBuilder,
    writer: ArrowWriter<File>,
}

impl ParquetTable {
    pub fn create(path: &Path, columns: &[(&str, Kind)], codec: Codec) -> std::io::Result<ParquetTable> {
        let file = File::create(path)?;
        let schema = schema(columns);
        let mut props = WriterProperties::builder()
            .set_compression(match codec {
                Codec::None => Compression::UNCOMPRESSED,
                Codec::Snappy => Compression::SNAPPY,
            })
            .set_created_by(format!("tracelab-analyzer {}", env!("CARGO_PKG_VERSION")));
        for (name, kind) in columns {
            props = props
                .set_column_dictionary_enabled(ColumnPath::from(*name), kind.dictionary())
                .set_column_statistics_enabled(ColumnPath::from(*name), kind.statistics());
        }
        let props = props.build();
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(io_err)?;
        Ok(ParquetTable { path: path.to_path_buf(), builder: TableBuilder::new(schema), writer })
    }

    /// The row builder; call `flush_if_full()` after each `end_row()`.
    pub fn row(&mut self) -> &mut TableBuilder {
        &mut self.builder
    }

    pub fn flush_if_full(&mut self) -> std::io::Result<()> {
        if self.builder.rows() >= BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes an already-built batch (same schema).
    pub fn write_batch(&mut self, batch: &RecordBatch) -> std::io::Result<()> {
        self.writer.write(batch).map_err(io_err)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.builder.rows() > 0 {
            let batch = self.builder.finish();
            self.writer.write(&batch).map_err(io_err)?;
        }
        Ok(())
    }

    /// The rows so far flushed, then the file writer underneath, for
    /// writing row groups column chunk by column chunk.
    pub fn into_serialized_writer(mut self) -> std::io::Result<(SerializedFileWriter<File>, ArrowRowGroupWriterFactory)> {
        self.flush()?;
        self.writer.into_serialized_writer().map_err(io_err)
    }

    pub fn close(mut self) -> std::io::Result<PathBuf> {
        self.flush()?;
        self.writer.close().map_err(io_err)?;
        Ok(self.path)
    }
}

pub fn io_err(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}
