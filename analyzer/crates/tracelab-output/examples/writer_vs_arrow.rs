//! Our Parquet writer against the `parquet` crate's `ArrowWriter` on the
//! same tables (docs/decisions/0002-own-parquet-writer.md): every Parquet
//! file of a profile directory is read, then written again by each, in the
//! same process, with the same layout where the library allows it (ZSTD at
//! `ZSTD_LEVEL`, dictionary pages for the same columns, chunk statistics,
//! 64 Ki-row groups). Each side starts from the values and builds its own
//! columns (our `Row` calls; the library's array builders), then encodes and
//! writes; the best of `--runs` is printed, in seconds of wall time.
//!
//!     cargo run --release --example writer_vs_arrow -- PROFILE_DIR [RUNS]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use tracelab_output::table::{Codec, Kind, ParquetTable, ROW_GROUP_ROWS, ZSTD_LEVEL};

struct Table {
    name: String,
    columns: Vec<(String, Kind)>,
    batch: RecordBatch,
}

fn read(path: &Path) -> Table {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let meta = builder.metadata().clone();
    let schema = builder.schema().clone();
    let batches: Vec<RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
    let batch = arrow_select_concat(&schema, &batches);
    let first = meta.row_groups().first();
    let columns = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let kind = match f.data_type() {
                arrow_schema::DataType::Float64 => Kind::F64,
                arrow_schema::DataType::Int64 => Kind::I64,
                arrow_schema::DataType::Int32 => Kind::I32,
                arrow_schema::DataType::Boolean => Kind::Bool,
                arrow_schema::DataType::Utf8 => {
                    // Labels are the columns our writer gave a dictionary page.
                    let dict = first.is_some_and(|g| g.column(i).dictionary_page_offset().is_some());
                    if dict {
                        Kind::Str
                    } else {
                        Kind::Id
                    }
                }
                t => panic!("{}: column {} of type {t}, not one our writer writes", path.display(), f.name()),
            };
            (f.name().clone(), kind)
        })
        .collect();
    Table { name: path.file_name().unwrap().to_string_lossy().into_owned(), columns, batch }
}

/// The batches of one file as one batch.
fn arrow_select_concat(schema: &arrow_schema::SchemaRef, batches: &[RecordBatch]) -> RecordBatch {
    arrow_select::concat::concat_batches(schema, batches).unwrap()
}

/// A column downcast once, so our side's per-cell cost is the push.
enum Typed<'a> {
    F64(&'a arrow_array::Float64Array),
    I64(&'a arrow_array::Int64Array),
    I32(&'a arrow_array::Int32Array),
    Bool(&'a arrow_array::BooleanArray),
    Str(&'a arrow_array::StringArray),
    Id(&'a arrow_array::StringArray),
}

fn ours(t: &Table, out: &Path) {
    let cols: Vec<(&str, Kind)> = t.columns.iter().map(|(n, k)| (n.as_str(), *k)).collect();
    let mut w = ParquetTable::create(out, &cols, Codec::Zstd(ZSTD_LEVEL)).unwrap();
    let b = &t.batch;
    let typed: Vec<Typed> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, (_, kind))| {
            let a = b.column(i);
            match kind {
                Kind::F64 => Typed::F64(a.as_primitive::<Float64Type>()),
                Kind::I64 => Typed::I64(a.as_primitive::<Int64Type>()),
                Kind::I32 => Typed::I32(a.as_primitive::<Int32Type>()),
                Kind::Bool => Typed::Bool(a.as_boolean()),
                Kind::Str => Typed::Str(a.as_string::<i32>()),
                Kind::Id => Typed::Id(a.as_string::<i32>()),
            }
        })
        .collect();
    for row in 0..b.num_rows() {
        let mut r = w.row();
        for c in &typed {
            r = match c {
                Typed::F64(a) => r.f64(a.is_valid(row).then(|| a.value(row))),
                Typed::I64(a) => r.i64(a.is_valid(row).then(|| a.value(row))),
                Typed::I32(a) => r.i32(a.is_valid(row).then(|| a.value(row))),
                Typed::Bool(a) => r.bool(a.is_valid(row).then(|| a.value(row))),
                Typed::Str(a) => r.str(a.is_valid(row).then(|| a.value(row))),
                Typed::Id(a) => r.id(a.is_valid(row).then(|| a.value(row).as_bytes())),
            };
        }
        r.end();
        w.flush_if_full().unwrap();
    }
    w.close().unwrap();
}

fn library(t: &Table, out: &Path) {
    let b = &t.batch;
    let n = b.num_rows();
    let arrays: Vec<ArrayRef> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, (_, kind))| {
            let a = b.column(i);
            let v = |row: usize| a.is_valid(row);
            match kind {
                Kind::F64 => {
                    let mut x = Float64Builder::with_capacity(n);
                    (0..n).for_each(|r| x.append_option(v(r).then(|| a.as_primitive::<Float64Type>().value(r))));
                    Arc::new(x.finish()) as ArrayRef
                }
                Kind::I64 => {
                    let mut x = Int64Builder::with_capacity(n);
                    (0..n).for_each(|r| x.append_option(v(r).then(|| a.as_primitive::<Int64Type>().value(r))));
                    Arc::new(x.finish())
                }
                Kind::I32 => {
                    let mut x = Int32Builder::with_capacity(n);
                    (0..n).for_each(|r| x.append_option(v(r).then(|| a.as_primitive::<Int32Type>().value(r))));
                    Arc::new(x.finish())
                }
                Kind::Bool => {
                    let mut x = BooleanBuilder::with_capacity(n);
                    (0..n).for_each(|r| x.append_option(v(r).then(|| a.as_boolean().value(r))));
                    Arc::new(x.finish())
                }
                Kind::Str | Kind::Id => {
                    let mut x = StringBuilder::with_capacity(n, 16 * n);
                    (0..n).for_each(|r| x.append_option(v(r).then(|| a.as_string::<i32>().value(r))));
                    Arc::new(x.finish())
                }
            }
        })
        .collect();
    let batch = RecordBatch::try_new(b.schema(), arrays).unwrap();
    let mut props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL).unwrap()))
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_dictionary_enabled(false);
    for (name, kind) in &t.columns {
        if *kind == Kind::Str {
            props = props.set_column_dictionary_enabled(name.as_str().into(), true);
        }
    }
    let mut w = ArrowWriter::try_new(File::create(out).unwrap(), batch.schema(), Some(props.build())).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

fn best(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().expect("usage: writer_vs_arrow PROFILE_DIR [RUNS]"));
    let runs: usize = args.next().map_or(3, |r| r.parse().expect("RUNS is a number"));
    let mut files: Vec<PathBuf> = ["connections", "hosts", "load"]
        .iter()
        .map(|n| dir.join(format!("{n}.parquet")))
        .chain(std::fs::read_dir(dir.join("samples")).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    let tmp = std::env::temp_dir().join(format!("writer_vs_arrow-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let (mut total_ours, mut total_lib) = (0.0, 0.0);
    println!("{:<22} {:>9} {:>9} {:>9} {:>10} {:>10}", "table", "rows", "ours s", "arrow s", "ours MB", "arrow MB");
    for path in &files {
        let t = read(path);
        let (a, l) = (tmp.join("ours.parquet"), tmp.join("arrow.parquet"));
        let so = best(runs, || ours(&t, &a));
        let sl = best(runs, || library(&t, &l));
        let mb = |p: &Path| std::fs::metadata(p).unwrap().len() as f64 / 1e6;
        println!("{:<22} {:>9} {:>9.3} {:>9.3} {:>10.2} {:>10.2}", t.name, t.batch.num_rows(), so, sl, mb(&a), mb(&l));
        total_ours += so;
        total_lib += sl;
    }
    println!("{:<22} {:>9} {:>9.3} {:>9.3}", "total", "", total_ours, total_lib);
    std::fs::remove_dir_all(&tmp).unwrap();
}
