//! A Parquet file writer for flat tables of optional columns (the format:
//! apache/parquet-format, `parquet.thrift` and `Encodings.md`).
//!
//! Each row group holds one column chunk per column, and each chunk one data
//! page (format v1), preceded by a dictionary page for labels. A file may
//! have *late* columns, whose chunks are written after every row group's
//! other chunks (connections.parquet's columns that need the whole trace):
//! the footer gives every chunk's own offset, which is all the format asks
//! of a row group's chunks (they need not be adjacent), so no byte of the
//! file is written twice. The footer has the schema, per chunk the offsets,
//! sizes, encodings and statistics (null count, and min/max for numbers,
//! times and booleans), and column orders so readers trust the min/max. Not
//! written: page indexes (ColumnIndex, OffsetIndex: with one page per chunk
//! they would repeat the chunk statistics), bloom filters, page-level
//! statistics, page encoding stats, nested or repeated columns, statistics
//! of strings (nobody filters on their lexical range). Times (`Kind::Time`)
//! are INT64 microseconds with the logical type TIMESTAMP(MICROS,
//! isAdjustedToUTC) and the converted type TIMESTAMP_MICROS for older
//! readers. The key-value metadata holds the schema's version
//! (`tracelab.schema_version`) and the Arrow schema (`ARROW:schema`), which
//! gives Arrow readers each field's `description` and the time zone.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use arrow_schema::{Field, Schema};
use base64::Engine;

use crate::column::{Columns, Encode, MinMax};
use crate::schema::{Codec, ColumnDef, Kind, SCHEMA_VERSION, SCHEMA_VERSION_KEY};
use crate::thrift::{self, Compact};

const MAGIC: &[u8; 4] = b"PAR1";

// parquet.thrift enums.
const BOOLEAN: i32 = 0;
const INT32: i32 = 1;
const INT64: i32 = 2;
const DOUBLE: i32 = 5;
const BYTE_ARRAY: i32 = 6;
const OPTIONAL: i32 = 1;
const CONVERTED_UTF8: i32 = 0;
const CONVERTED_TIMESTAMP_MICROS: i32 = 10;
const PLAIN: i32 = 0;
const RLE: i32 = 3;
const RLE_DICTIONARY: i32 = 8;
const DATA_PAGE: i32 = 0;
const DICTIONARY_PAGE: i32 = 2;
const UNCOMPRESSED: i32 = 0;
const SNAPPY: i32 = 1;
const ZSTD: i32 = 6;

fn physical_type(k: Kind) -> i32 {
    match k {
        Kind::F64 => DOUBLE,
        Kind::I64 | Kind::Time => INT64,
        Kind::I32 => INT32,
        Kind::Bool => BOOLEAN,
        Kind::Str | Kind::Id => BYTE_ARRAY,
    }
}

/// Where a written column chunk is and what the footer says of it.
#[derive(Clone, Debug)]
pub struct Chunk {
    /// Offset of the first page: the dictionary page if there is one.
    start: u64,
    /// Offset of the data page.
    data_page: u64,
    dictionary: bool,
    /// Bytes on disk, page headers included.
    size: u64,
    /// The same with the page bodies uncompressed.
    uncompressed: u64,
    /// Rows, nulls included.
    values: u64,
    nulls: u64,
    min_max: Option<MinMax>,
}

/// A written row group: its row count and its chunks, in column order.
#[derive(Clone, Debug)]
struct RowGroup {
    rows: u64,
    chunks: Vec<Chunk>,
}

impl RowGroup {
    fn rows(&self) -> usize {
        self.rows as usize
    }
}

pub struct FileWriter {
    out: BufWriter<File>,
    /// Bytes written so far.
    pos: u64,
    columns: Vec<(String, Kind)>,
    /// The `ARROW:schema` value: the base64 of the Arrow IPC Schema message.
    arrow_schema: String,
    /// How many of the last `columns` are late (`write_late`).
    late: usize,
    codec: Codec,
    groups: Vec<RowGroup>,
    /// A page header or the footer, reused.
    header: Vec<u8>,
}

/// A page's uncompressed body, its compressed form and the compressors'
/// states, reused from page to page and shared by every file its thread
/// writes: each file held its own before, grown to its largest page (~1.4
/// MB bodies of uid columns, a ZSTD context each) while the analyzer kept
/// four files open. Output is the same byte for byte (a page is compressed
/// in one call, whatever the context did before). make bench-analyzer's
/// 6 M-packet trace: see docs/performance-history.md, analyzer step 34.
struct PageScratch {
    body: Vec<u8>,
    packed: Vec<u8>,
    snappy: snap::raw::Encoder,
    /// The ZSTD compressor and its level.
    zstd: Option<(i32, zstd::bulk::Compressor<'static>)>,
}

thread_local! {
    static SCRATCH: RefCell<PageScratch> = RefCell::new(PageScratch {
        body: Vec::new(),
        packed: Vec::new(),
        snappy: snap::raw::Encoder::new(),
        zstd: None,
    });
}

impl FileWriter {
    /// A file of `columns`, the last `late` of them written with
    /// `write_late` once every row group's other chunks are written.
    pub fn create(path: &Path, columns: &[ColumnDef], late: usize, codec: Codec) -> io::Result<FileWriter> {
        assert!(late < columns.len(), "a file has columns written with its rows");
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        out.write_all(MAGIC)?;
        Ok(FileWriter {
            out,
            pos: MAGIC.len() as u64,
            columns: columns.iter().map(|(n, k, _)| (n.to_string(), *k)).collect(),
            arrow_schema: encoded_arrow_schema(columns),
            late,
            codec,
            groups: Vec::new(),
            header: Vec::new(),
        })
    }

    /// Writes the columns (the file's, in order, but for the late ones;
    /// `rows` long) as a row group and empties them.
    pub(crate) fn write_group(&mut self, columns: &mut Columns, rows: usize) -> io::Result<()> {
        assert_eq!(columns.len(), self.columns.len() - self.late, "a row group has every column but the late ones");
        let mut chunks = Vec::with_capacity(self.columns.len());
        for i in 0..columns.len() {
            chunks.push(self.write_chunk(columns.get(i), rows)?);
        }
        self.groups.push(RowGroup { rows: rows as u64, chunks });
        Ok(())
    }

    /// Row counts of the row groups written so far, in order.
    pub(crate) fn group_rows(&self) -> impl Iterator<Item = usize> + '_ {
        self.groups.iter().map(RowGroup::rows)
    }

    /// Writes the late columns (in order, as long as row group `group`) as
    /// that group's last chunks and empties them.
    pub(crate) fn write_late(&mut self, group: usize, columns: &mut Columns, rows: usize) -> io::Result<()> {
        assert_eq!(columns.len(), self.late, "the late columns, all of them");
        let g = &self.groups[group];
        assert_eq!(g.chunks.len(), self.columns.len() - self.late, "a row group's late columns are written once");
        assert_eq!(rows, g.rows(), "the late columns have the group's rows");
        for i in 0..columns.len() {
            let chunk = self.write_chunk(columns.get(i), rows)?;
            self.groups[group].chunks.push(chunk);
        }
        Ok(())
    }

    fn write_chunk(&mut self, c: &mut dyn Encode, rows: usize) -> io::Result<Chunk> {
        SCRATCH.with_borrow_mut(|scratch| self.write_chunk_with(c, rows, scratch))
    }

    fn write_chunk_with(&mut self, c: &mut dyn Encode, rows: usize, scratch: &mut PageScratch) -> io::Result<Chunk> {
        // A row begun and not ended (`Row::end`) leaves its columns longer
        // than the table.
        assert_eq!(c.rows(), rows, "every column has a value or a null in each row");
        let start = self.pos;
        let mut uncompressed = 0;
        let dictionary = c.dictionary().is_some();
        if let Some((plain, entries)) = c.dictionary() {
            scratch.body.clear();
            uncompressed += self.write_page(scratch, DICTIONARY_PAGE, entries, PLAIN, plain)?;
        }
        let data_page = self.pos;
        scratch.body.clear();
        let (tail, min_max) = c.encode_page(rows, &mut scratch.body);
        let encoding = if dictionary { RLE_DICTIONARY } else { PLAIN };
        uncompressed += self.write_page(scratch, DATA_PAGE, rows, encoding, tail)?;
        let chunk = Chunk {
            start,
            data_page,
            dictionary,
            size: self.pos - start,
            uncompressed,
            values: rows as u64,
            nulls: c.nulls() as u64,
            min_max,
        };
        c.clear();
        Ok(chunk)
    }

    /// Writes a page whose body is `scratch.body` then `tail` (compressed
    /// if asked) after its header; returns the page's uncompressed size,
    /// header included.
    fn write_page(
        &mut self,
        scratch: &mut PageScratch,
        page_type: i32,
        values: usize,
        encoding: i32,
        tail: &[u8],
    ) -> io::Result<u64> {
        let PageScratch { body, packed, snappy, zstd } = scratch;
        let plain_size = body.len() + tail.len();
        let (body, tail) = match self.codec {
            Codec::None => (&*body, tail),
            Codec::Snappy => {
                body.extend_from_slice(tail);
                packed.resize(snap::raw::max_compress_len(body.len()), 0);
                let n = snappy.compress(body, packed).map_err(io::Error::other)?;
                packed.truncate(n);
                (&*packed, &[][..])
            }
            Codec::Zstd(level) => {
                body.extend_from_slice(tail);
                packed.clear();
                packed.reserve(zstd::zstd_safe::compress_bound(body.len()));
                let z = match zstd {
                    Some((l, z)) if *l == level => z,
                    _ => &mut zstd.insert((level, zstd::bulk::Compressor::new(level)?)).1,
                };
                z.compress_to_buffer(&body[..], packed)?;
                (&*packed, &[][..])
            }
        };
        let stored = body.len() + tail.len();
        let size = |n: usize| i32::try_from(n).map_err(|_| io::Error::other("a Parquet page is limited to 2 GiB"));
        let values = size(values)?;
        self.header.clear();
        let mut h = Compact::new(&mut self.header);
        h.i32(1, page_type).i32(2, size(plain_size)?).i32(3, size(stored)?);
        if page_type == DATA_PAGE {
            h.begin(5).i32(1, values).i32(2, encoding).i32(3, RLE).i32(4, RLE).end();
        } else {
            h.begin(7).i32(1, values).i32(2, encoding).end();
        }
        h.finish();
        self.out.write_all(&self.header)?;
        self.out.write_all(body)?;
        self.out.write_all(tail)?;
        self.pos += (self.header.len() + stored) as u64;
        Ok((self.header.len() + plain_size) as u64)
    }

    /// Writes the footer and closes the file.
    pub fn finish(mut self) -> io::Result<()> {
        assert!(
            self.groups.iter().all(|g| g.chunks.len() == self.columns.len()),
            "every row group has its late columns"
        );
        self.header.clear();
        let mut f = Compact::new(&mut self.header);
        f.i32(1, 1);
        // The schema: a root group, then one OPTIONAL leaf per column.
        f.list(2, thrift::STRUCT, self.columns.len() + 1);
        f.begin_elem().binary(4, b"schema").i32(5, self.columns.len() as i32).end();
        for (name, kind) in &self.columns {
            f.begin_elem().i32(1, physical_type(*kind)).i32(3, OPTIONAL).binary(4, name.as_bytes());
            match kind {
                Kind::Str | Kind::Id => {
                    f.i32(6, CONVERTED_UTF8).begin(10).begin(1).end().end();
                }
                // LogicalType.TIMESTAMP: TimestampType{isAdjustedToUTC,
                // unit: TimeUnit.MICROS}.
                Kind::Time => {
                    f.i32(6, CONVERTED_TIMESTAMP_MICROS).begin(10).begin(8).bool(1, true);
                    f.begin(2).begin(2).end().end().end().end();
                }
                Kind::F64 | Kind::I64 | Kind::I32 | Kind::Bool => {}
            }
            f.end();
        }
        f.i64(3, self.groups.iter().map(|g| g.rows as i64).sum());
        f.list(4, thrift::STRUCT, self.groups.len());
        for (ordinal, g) in self.groups.iter().enumerate() {
            f.begin_elem().list(1, thrift::STRUCT, g.chunks.len());
            for (c, (name, kind)) in g.chunks.iter().zip(&self.columns) {
                // ColumnChunk.file_offset is deprecated; 0 as other writers do.
                f.begin_elem().i64(2, 0).begin(3);
                f.i32(1, physical_type(*kind));
                if c.dictionary {
                    f.list(2, thrift::I32, 3).elem_i32(PLAIN).elem_i32(RLE).elem_i32(RLE_DICTIONARY);
                } else {
                    f.list(2, thrift::I32, 2).elem_i32(PLAIN).elem_i32(RLE);
                }
                f.list(3, thrift::BINARY, 1).elem_binary(name.as_bytes());
                f.i32(
                    4,
                    match self.codec {
                        Codec::None => UNCOMPRESSED,
                        Codec::Snappy => SNAPPY,
                        Codec::Zstd(_) => ZSTD,
                    },
                );
                f.i64(5, c.values as i64).i64(6, c.uncompressed as i64).i64(7, c.size as i64);
                f.i64(9, c.data_page as i64);
                if c.dictionary {
                    f.i64(11, c.start as i64);
                }
                // Statistics of numbers, times and booleans: null_count, then
                // max_value and min_value.
                if !matches!(kind, Kind::Str | Kind::Id) {
                    f.begin(12).i64(3, c.nulls as i64);
                    if let Some(m) = &c.min_max {
                        f.binary(5, &m.max[..m.len]).binary(6, &m.min[..m.len]);
                    }
                    f.end();
                }
                f.end().end();
            }
            // Sizes of the group's chunks wherever they lie (late ones after
            // the last group); file_offset is its first chunk's.
            let size: u64 = g.chunks.iter().map(|c| c.uncompressed).sum();
            let on_disk: u64 = g.chunks.iter().map(|c| c.size).sum();
            f.i64(2, size as i64).i64(3, g.rows as i64);
            f.i64(5, g.chunks.first().map_or(0, |c| c.start) as i64).i64(6, on_disk as i64);
            if let Ok(ordinal) = i16::try_from(ordinal) {
                f.i16(7, ordinal);
            }
            f.end();
        }
        f.list(5, thrift::STRUCT, 2);
        f.begin_elem().binary(1, SCHEMA_VERSION_KEY.as_bytes()).binary(2, SCHEMA_VERSION.as_bytes()).end();
        f.begin_elem().binary(1, b"ARROW:schema").binary(2, self.arrow_schema.as_bytes()).end();
        f.binary(6, concat!("tracelab-analyzer version ", env!("CARGO_PKG_VERSION")).as_bytes());
        // Column orders: TYPE_DEFINED_ORDER for every column, without which
        // readers ignore min_value/max_value.
        f.list(7, thrift::STRUCT, self.columns.len());
        for _ in &self.columns {
            f.begin_elem().begin(1).end().end();
        }
        f.finish();
        self.out.write_all(&self.header)?;
        self.out.write_all(&(self.header.len() as u32).to_le_bytes())?;
        self.out.write_all(MAGIC)?;
        self.out.flush()
    }
}

/// The Arrow schema of `columns` (each field nullable, with its description
/// as `description` metadata unless empty) as readers find it under
/// `ARROW:schema`: an IPC Schema message behind the continuation marker and
/// its length, in base64 (as Arrow C++ and the `parquet` crate write it).
fn encoded_arrow_schema(columns: &[ColumnDef]) -> String {
    let fields: Vec<Field> = columns
        .iter()
        .map(|&(name, kind, doc)| {
            let field = Field::new(name, kind.data_type(), true);
            if doc.is_empty() {
                field
            } else {
                field.with_metadata(HashMap::from([("description".to_string(), doc.to_string())]))
            }
        })
        .collect();
    let options = arrow_ipc::writer::IpcWriteOptions::default();
    let mut dictionaries = arrow_ipc::writer::DictionaryTracker::new(true);
    let message = arrow_ipc::writer::IpcDataGenerator::default()
        .schema_to_bytes_with_dictionary_tracker(&Schema::new(fields), &mut dictionaries, &options)
        .ipc_message;
    let len = u32::try_from(message.len()).expect("a schema message is shorter than 4 GiB");
    let mut framed = Vec::with_capacity(message.len() + 8);
    framed.extend_from_slice(&[0xFF; 4]);
    framed.extend_from_slice(&len.to_le_bytes());
    framed.extend_from_slice(&message);
    base64::engine::general_purpose::STANDARD.encode(framed)
}
