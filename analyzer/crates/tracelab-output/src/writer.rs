//! A table's Parquet file, written by the `parquet` crate's Arrow writer
//! a row group at a time (docs/decisions/0002-own-parquet-writer.md).
//!
//! Each row group's columns are encoded into column chunks by the crate's
//! column writers (the pieces its `ArrowWriter` is made of) and appended to
//! the file. A file may have *late* columns (connections.parquet's columns
//! that need the whole trace): every row group's other chunks are encoded
//! as its rows come, their pages kept in a spill file beside the output
//! (`SpilledPages`), and the row group is written once its late chunks are
//! encoded too; memory holds only the chunks' metadata.
//!
//! Layout: all columns nullable, one row group per `group_rows` rows, data
//! pages v1, dictionary encoding for labels only, chunk statistics (null
//! count, min/max) on numbers, times and booleans but not on strings, no
//! page index or bloom filters. The key-value metadata holds the Arrow
//! schema with each field's `description` (`ARROW:schema`) and the schema
//! version (`tracelab.schema_version`).

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use arrow_array::ArrayRef;
use arrow_schema::{Field, Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowRowGroupWriterFactory, PageKey, PageStore, PageStoreArgs, PageStoreFactory,
};
use parquet::arrow::{add_encoded_arrow_schema_to_metadata, ArrowSchemaConverter};
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;

use crate::schema::{Codec, ColumnDef, Kind, SCHEMA_VERSION, SCHEMA_VERSION_KEY};

fn io_error(e: ParquetError) -> io::Error {
    match e {
        ParquetError::External(e) => match e.downcast::<io::Error>() {
            Ok(e) => *e,
            Err(e) => io::Error::other(e),
        },
        e => io::Error::other(e),
    }
}

/// The Arrow schema of `columns`, with their descriptions.
pub(crate) fn arrow_schema(columns: &[ColumnDef]) -> Schema {
    Schema::new(
        columns
            .iter()
            .map(|&(name, kind, doc)| {
                let field = Field::new(name, kind.data_type(), true);
                if doc.is_empty() {
                    field
                } else {
                    field.with_metadata(HashMap::from([("description".to_string(), doc.to_string())]))
                }
            })
            .collect::<Vec<_>>(),
    )
}

fn properties(columns: &[ColumnDef], codec: Codec) -> io::Result<WriterProperties> {
    let compression = match codec {
        Codec::None => Compression::UNCOMPRESSED,
        Codec::Snappy => Compression::SNAPPY,
        Codec::Zstd(level) => Compression::ZSTD(ZstdLevel::try_new(level).map_err(io_error)?),
    };
    let mut props = WriterProperties::builder()
        .set_compression(compression)
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_offset_index_disabled(true)
        .set_created_by(concat!("tracelab-analyzer version ", env!("CARGO_PKG_VERSION")).to_string())
        .set_key_value_metadata(Some(vec![KeyValue::new(SCHEMA_VERSION_KEY.to_string(), SCHEMA_VERSION.to_string())]));
    for &(name, kind, _) in columns {
        let path = ColumnPath::new(vec![name.to_string()]);
        match kind {
            Kind::Str => {
                props = props
                    .set_column_dictionary_enabled(path.clone(), true)
                    .set_column_statistics_enabled(path, EnabledStatistics::None)
            }
            Kind::Id => props = props.set_column_statistics_enabled(path, EnabledStatistics::None),
            Kind::F64 | Kind::I64 | Kind::I32 | Kind::Time | Kind::Bool => {}
        }
    }
    let mut props = props.build();
    add_encoded_arrow_schema_to_metadata(&arrow_schema(columns), &mut props);
    Ok(props)
}

/// A row group whose late columns are still to come: its rows and its
/// other columns' encoded chunks (their pages in the spill file).
struct PendingGroup {
    rows: usize,
    chunks: Vec<ArrowColumnChunk>,
}

pub(crate) struct TableWriter {
    file: SerializedFileWriter<BufWriter<File>>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// How many of the last columns are late (`write_late`).
    late: usize,
    /// Row groups written or pending so far.
    groups: usize,
    pending: Vec<PendingGroup>,
}

impl TableWriter {
    /// A file of `columns`, the last `late` of them written with
    /// `write_late` once every row group's other columns are encoded.
    pub(crate) fn create(path: &Path, columns: &[ColumnDef], late: usize, codec: Codec) -> io::Result<TableWriter> {
        assert!(late < columns.len(), "a file has columns written with its rows");
        let schema = Arc::new(arrow_schema(columns));
        let props = Arc::new(properties(columns, codec)?);
        let parquet_schema = ArrowSchemaConverter::new().convert(&schema).map_err(io_error)?;
        let out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        let file = SerializedFileWriter::new(out, parquet_schema.root_schema_ptr(), props).map_err(io_error)?;
        let mut factory = ArrowRowGroupWriterFactory::new(&file, Arc::clone(&schema));
        if late > 0 {
            let spill = path.with_extension("pages");
            factory = factory.with_page_store_factory(Arc::new(SpilledPages::create(&spill)?));
        }
        Ok(TableWriter { file, factory, schema, late, groups: 0, pending: Vec::new() })
    }

    /// Encodes the columns (the file's, in order, but for the late ones;
    /// `rows` long) as the next row group: written now, or kept for its
    /// late columns.
    pub(crate) fn write_group(&mut self, columns: &[ArrayRef], rows: usize) -> io::Result<()> {
        let early = self.schema.fields().len() - self.late;
        assert_eq!(columns.len(), early, "a row group has every column but the late ones");
        let chunks = self.encode(self.groups, 0, columns, rows)?;
        self.groups += 1;
        if self.late == 0 {
            self.append(chunks)
        } else {
            self.pending.push(PendingGroup { rows, chunks });
            Ok(())
        }
    }

    /// Row counts of the row groups waiting for their late columns, in order.
    pub(crate) fn group_rows(&self) -> Vec<usize> {
        self.pending.iter().map(|g| g.rows).collect()
    }

    /// Encodes the late columns (in order, as long as row group `group`)
    /// and writes that row group whole.
    pub(crate) fn write_late(&mut self, group: usize, columns: &[ArrayRef], rows: usize) -> io::Result<()> {
        assert_eq!(columns.len(), self.late, "the late columns, all of them");
        let early = self.schema.fields().len() - self.late;
        let g = &mut self.pending[group];
        assert_eq!(rows, g.rows, "the late columns have the group's rows");
        assert!(!g.chunks.is_empty(), "a row group's late columns are written once");
        let mut chunks = std::mem::take(&mut g.chunks);
        chunks.extend(self.encode(group, early, columns, rows)?);
        self.append(chunks)
    }

    /// The chunks of `columns`, the file's columns from `first` on, for
    /// row group `group`.
    fn encode(
        &self,
        group: usize,
        first: usize,
        columns: &[ArrayRef],
        rows: usize,
    ) -> io::Result<Vec<ArrowColumnChunk>> {
        let writers = self.factory.create_column_writers(group).map_err(io_error)?;
        let fields = self.schema.fields();
        let mut chunks = Vec::with_capacity(columns.len());
        for ((mut writer, field), array) in writers.into_iter().skip(first).zip(&fields[first..]).zip(columns) {
            // A row begun and not ended (`Row::end`) leaves its columns
            // longer than the table.
            assert_eq!(array.len(), rows, "every column has a value or a null in each row");
            for leaf in compute_leaves(field, array).map_err(io_error)? {
                writer.write(&leaf).map_err(io_error)?;
            }
            chunks.push(writer.close().map_err(io_error)?);
        }
        Ok(chunks)
    }

    fn append(&mut self, chunks: Vec<ArrowColumnChunk>) -> io::Result<()> {
        let mut group = self.file.next_row_group().map_err(io_error)?;
        for chunk in chunks {
            chunk.append_to_row_group(&mut group).map_err(io_error)?;
        }
        group.close().map_err(io_error)?;
        Ok(())
    }

    /// Writes the footer and closes the file.
    pub(crate) fn finish(self) -> io::Result<()> {
        assert!(self.pending.iter().all(|g| g.chunks.is_empty()), "every row group has its late columns");
        self.file.close().map_err(io_error)?;
        Ok(())
    }
}

/// The pages of the column chunks that wait for their row group's late
/// columns, kept in one file (unlinked once open, so it goes with the
/// process) rather than in memory: a trace's connections take ~60 bytes
/// each once encoded.
#[derive(Debug)]
struct SpilledPages {
    file: Arc<Mutex<SpillFile>>,
}

#[derive(Debug)]
struct SpillFile {
    file: File,
    end: u64,
}

impl SpilledPages {
    fn create(path: &Path) -> io::Result<SpilledPages> {
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path)?;
        fs::remove_file(path)?;
        Ok(SpilledPages { file: Arc::new(Mutex::new(SpillFile { file, end: 0 })) })
    }
}

impl PageStoreFactory for SpilledPages {
    fn create(&self, _: &PageStoreArgs<'_>) -> parquet::errors::Result<Box<dyn PageStore>> {
        Ok(Box::new(ChunkPages { file: Arc::clone(&self.file), pages: Vec::new() }))
    }
}

/// One column chunk's pages in the spill file: (offset, length) by key.
struct ChunkPages {
    file: Arc<Mutex<SpillFile>>,
    pages: Vec<(u64, usize)>,
}

impl PageStore for ChunkPages {
    fn put(&mut self, value: Bytes) -> parquet::errors::Result<PageKey> {
        let mut spill = self.file.lock().expect("the spill file's lock is not poisoned");
        let at = spill.end;
        spill.file.write_all_at(&value, at)?;
        spill.end += value.len() as u64;
        self.pages.push((at, value.len()));
        Ok(PageKey::new(self.pages.len() as u64 - 1))
    }

    fn take(&mut self, key: PageKey) -> parquet::errors::Result<Bytes> {
        let (at, len) = self.pages[key.get() as usize];
        let mut bytes = vec![0; len];
        self.file.lock().expect("the spill file's lock is not poisoned").file.read_exact_at(&mut bytes, at)?;
        Ok(Bytes::from(bytes))
    }
}
