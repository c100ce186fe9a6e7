//! The tables' front end and file layout checked with the `parquet` crate's
//! reader (pyarrow and DuckDB read the same files in tests/test_query.py
//! and models/tests): values, nulls, types, the Arrow schema with its
//! descriptions, the schema version and statistics of tables with several
//! row groups, for every codec, with late columns, and rows filled a run at
//! a time against rows filled one by one.

use std::fs::File;
use std::path::PathBuf;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, LogicalType, TimeUnit as ParquetTimeUnit, TimestampType, Type as PhysicalType};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::statistics::Statistics;
use tracelab_output::table::{Codec, ColumnDef, Kind, ParquetTable, SCHEMA_VERSION, ZSTD_LEVEL};

const COLUMNS: &[ColumnDef] = &[
    ("f", Kind::F64, "a float"),
    ("i", Kind::I64, ""),
    ("n", Kind::I32, ""),
    ("label", Kind::Str, "a label"),
    ("id", Kind::Id, ""),
    ("b", Kind::Bool, ""),
    ("static", Kind::Str, ""),
    ("t", Kind::Time, "a time"),
];
const LABELS: [&str; 5] = ["", "orig", "resp", "lc-rp", "a longer label than eight bytes"];

#[derive(Clone, Debug)]
struct Row {
    f: Option<f64>,
    i: Option<i64>,
    n: Option<i32>,
    label: Option<String>,
    id: Option<String>,
    b: Option<bool>,
    stat: Option<&'static str>,
    /// Nanoseconds since the epoch.
    t: Option<i64>,
}

/// Deterministic rows: about one value in five null, runs of labels and
/// scattered ones, empty strings, negative numbers, zeros of both signs, a
/// NaN, and a stretch where `n` is null in a whole row group.
fn rows(count: usize) -> Vec<Row> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..count)
        .map(|k| {
            let r = next();
            let null = |bit: u32| (r >> bit).is_multiple_of(5);
            let label_idx = if k % 50 < 20 { 1 } else { (r >> 20) as usize % LABELS.len() };
            Row {
                f: (!null(0)).then(|| match k {
                    7 => f64::NAN,
                    8 => -0.0,
                    _ => ((r >> 8) % 2001) as f64 / 7.0 - 100.0,
                }),
                i: (!null(4)).then(|| (r >> 12) as i64 - (1 << 51)),
                n: (!null(8) && !(200..300).contains(&k)).then_some((r >> 40) as i32 % 1000),
                label: (!null(12)).then(|| LABELS[label_idx].to_string()),
                id: (!null(16)).then(|| if k % 9 == 0 { String::new() } else { format!("C{k:x}{}", r % 977) }),
                b: (!null(24)).then_some((r >> 30) & 1 == 1),
                stat: (!null(28)).then_some(LABELS[k % 3]),
                // Before and after the epoch, and sub-microsecond parts,
                // which the column drops rounding down.
                t: (!null(32)).then(|| (r >> 34) as i64 - (1 << 29) + if k == 11 { i64::MIN + 999 } else { 0 }),
            }
        })
        .collect()
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tracelab-output-readback-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn write(name: &str, rows: &[Row], codec: Codec, group_rows: usize) -> PathBuf {
    let mut t = ParquetTable::with_group_rows(&tmp(name), COLUMNS, codec, group_rows).unwrap();
    for r in rows {
        t.row()
            .f64(r.f)
            .i64(r.i)
            .i32(r.n)
            .str(r.label.as_deref())
            .id(r.id.as_deref())
            .bool(r.b)
            .str(r.stat)
            .time_ns(r.t)
            .end();
        t.flush_if_full().unwrap();
    }
    t.close().unwrap()
}

fn read(path: &PathBuf) -> (ParquetMetaData, Vec<RecordBatch>) {
    let b = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let meta = b.metadata().as_ref().clone();
    (meta, b.build().unwrap().map(|b| b.unwrap()).collect())
}

fn strings(b: &RecordBatch, col: usize) -> Vec<Option<String>> {
    b.column(col).as_string::<i32>().iter().map(|v| v.map(str::to_string)).collect()
}

/// Nanoseconds as microseconds, rounded down, computed apart from the
/// writer's `div_euclid`.
fn micros(ns: i64) -> i64 {
    let q = ns / 1000;
    if ns % 1000 < 0 {
        q - 1
    } else {
        q
    }
}

/// Checks every value of `rows` against the batches read back.
fn check_values(batches: &[RecordBatch], rows: &[Row]) {
    let mut at = 0;
    for b in batches {
        let n = b.num_rows();
        let want = &rows[at..at + n];
        let f = b.column(0).as_primitive::<Float64Type>();
        for (k, r) in want.iter().enumerate() {
            let got = (!f.is_null(k)).then(|| f.value(k));
            assert_eq!(got.map(f64::to_bits), r.f.map(f64::to_bits), "f at row {}", at + k);
        }
        let i = b.column(1).as_primitive::<Int64Type>();
        assert_eq!(i.iter().collect::<Vec<_>>(), want.iter().map(|r| r.i).collect::<Vec<_>>());
        let n32 = b.column(2).as_primitive::<Int32Type>();
        assert_eq!(n32.iter().collect::<Vec<_>>(), want.iter().map(|r| r.n).collect::<Vec<_>>());
        assert_eq!(strings(b, 3), want.iter().map(|r| r.label.clone()).collect::<Vec<_>>());
        assert_eq!(strings(b, 4), want.iter().map(|r| r.id.clone()).collect::<Vec<_>>());
        let bools = b.column(5).as_boolean();
        assert_eq!(bools.iter().collect::<Vec<_>>(), want.iter().map(|r| r.b).collect::<Vec<_>>());
        assert_eq!(strings(b, 6), want.iter().map(|r| r.stat.map(str::to_string)).collect::<Vec<_>>());
        let t = b.column(7).as_primitive::<TimestampMicrosecondType>();
        assert_eq!(t.iter().collect::<Vec<_>>(), want.iter().map(|r| r.t.map(micros)).collect::<Vec<_>>());
        at += n;
    }
    assert_eq!(at, rows.len(), "every row read back");
}

/// Each numeric and boolean chunk's min/max and every chunk's null count
/// are those of its rows (NaN left out, zero minimum as -0.0); strings
/// carry no statistics.
fn check_statistics(meta: &ParquetMetaData, rows: &[Row], group_rows: usize) {
    assert_eq!(meta.num_row_groups(), rows.len().div_ceil(group_rows));
    for (g, rg) in meta.row_groups().iter().enumerate() {
        let part = &rows[g * group_rows..((g + 1) * group_rows).min(rows.len())];
        assert_eq!(rg.num_rows() as usize, part.len());
        let nulls = [
            part.iter().filter(|r| r.f.is_none()).count(),
            part.iter().filter(|r| r.i.is_none()).count(),
            part.iter().filter(|r| r.n.is_none()).count(),
            part.iter().filter(|r| r.label.is_none()).count(),
            part.iter().filter(|r| r.id.is_none()).count(),
            part.iter().filter(|r| r.b.is_none()).count(),
            part.iter().filter(|r| r.stat.is_none()).count(),
            part.iter().filter(|r| r.t.is_none()).count(),
        ];
        for c in [0, 1, 2, 5, 7] {
            let s = rg.column(c).statistics().expect("numbers, times and booleans have statistics");
            assert_eq!(s.null_count_opt(), Some(nulls[c] as u64), "group {g} column {c}");
        }
        let stats = |c: usize| rg.column(c).statistics().unwrap();
        match stats(0) {
            Statistics::Double(s) => {
                let vals: Vec<f64> = part.iter().filter_map(|r| r.f).filter(|x| !x.is_nan()).collect();
                let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
                let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let min = if min == 0.0 { -0.0 } else { min };
                assert_eq!(s.min_opt().map(|v| v.to_bits()), Some(min.to_bits()), "group {g}");
                assert_eq!(s.max_opt().copied(), Some(max), "group {g}");
            }
            other => panic!("f: {other:?}"),
        }
        match stats(1) {
            Statistics::Int64(s) => {
                assert_eq!(s.min_opt(), part.iter().filter_map(|r| r.i).min().as_ref());
                assert_eq!(s.max_opt(), part.iter().filter_map(|r| r.i).max().as_ref());
            }
            other => panic!("i: {other:?}"),
        }
        match stats(2) {
            Statistics::Int32(s) => {
                assert_eq!(s.min_opt(), part.iter().filter_map(|r| r.n).min().as_ref());
                assert_eq!(s.max_opt(), part.iter().filter_map(|r| r.n).max().as_ref());
            }
            other => panic!("n: {other:?}"),
        }
        match stats(5) {
            Statistics::Boolean(s) => {
                assert_eq!(s.min_opt(), part.iter().filter_map(|r| r.b).min().as_ref());
                assert_eq!(s.max_opt(), part.iter().filter_map(|r| r.b).max().as_ref());
            }
            other => panic!("b: {other:?}"),
        }
        match stats(7) {
            Statistics::Int64(s) => {
                assert_eq!(s.min_opt().copied(), part.iter().filter_map(|r| r.t).min().map(micros));
                assert_eq!(s.max_opt().copied(), part.iter().filter_map(|r| r.t).max().map(micros));
            }
            other => panic!("t: {other:?}"),
        }
        for c in [3, 4, 6] {
            assert!(rg.column(c).statistics().is_none(), "strings have no statistics");
        }
    }
}

#[test]
fn values_nulls_and_statistics_read_back() {
    let rows = rows(1037);
    for (codec, compression) in [
        (Codec::None, Compression::UNCOMPRESSED),
        (Codec::Snappy, Compression::SNAPPY),
        // The reader reports ZSTD at its default level whatever the writer's.
        (Codec::Zstd(ZSTD_LEVEL), Compression::ZSTD(Default::default())),
        (Codec::Zstd(3), Compression::ZSTD(Default::default())),
    ] {
        let path = write(&format!("t-{codec:?}.parquet"), &rows, codec, 100);
        let (meta, batches) = read(&path);
        let key_values: Vec<_> = meta
            .file_metadata()
            .key_value_metadata()
            .expect("the schema's version is in the metadata")
            .iter()
            .map(|kv| (kv.key.as_str(), kv.value.as_deref()))
            .collect();
        assert_eq!(key_values[0], ("tracelab.schema_version", Some(SCHEMA_VERSION)));
        assert_eq!(key_values[1].0, "ARROW:schema");
        assert_eq!(key_values.len(), 2);
        // The Arrow schema comes back with the descriptions and the time zone.
        let arrow = batches[0].schema();
        assert_eq!(arrow.field(0).metadata().get("description").map(String::as_str), Some("a float"));
        assert_eq!(arrow.field(3).metadata().get("description").map(String::as_str), Some("a label"));
        assert!(arrow.field(1).metadata().is_empty(), "no description, no metadata");
        assert_eq!(arrow.field(7).data_type(), &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())));
        let schema = meta.file_metadata().schema_descr();
        let types: Vec<_> = schema
            .columns()
            .iter()
            .map(|c| (c.name().to_string(), c.physical_type(), c.self_type().is_optional()))
            .collect();
        let want: Vec<_> = COLUMNS
            .iter()
            .map(|(n, k, _)| {
                let t = match k {
                    Kind::F64 => PhysicalType::DOUBLE,
                    Kind::I64 | Kind::Time => PhysicalType::INT64,
                    Kind::I32 => PhysicalType::INT32,
                    Kind::Str | Kind::Id => PhysicalType::BYTE_ARRAY,
                    Kind::Bool => PhysicalType::BOOLEAN,
                };
                (n.to_string(), t, true)
            })
            .collect();
        assert_eq!(types, want);
        assert_eq!(
            schema.column(7).logical_type_ref(),
            Some(&LogicalType::Timestamp(TimestampType { is_adjusted_to_u_t_c: true, unit: ParquetTimeUnit::MICROS }))
        );
        // Labels are dictionary-encoded, ids plain.
        let encodings = |c: usize| meta.row_group(0).column(c).encodings().collect::<Vec<_>>();
        assert!(encodings(3).contains(&parquet::basic::Encoding::RLE_DICTIONARY), "{:?}", encodings(3));
        assert!(!encodings(4).contains(&parquet::basic::Encoding::RLE_DICTIONARY), "{:?}", encodings(4));
        assert!(meta.row_groups().iter().flat_map(|g| g.columns()).all(|c| c.compression() == compression));
        check_values(&batches, &rows);
        check_statistics(&meta, &rows, 100);
        // Strings read as Utf8, not binary.
        assert_eq!(format!("{:?}", batches[0].schema().field(3).data_type()), "Utf8");
    }
}

/// A stale statistic is caught: the same rows with one value changed after
/// writing no longer check out.
#[test]
fn a_wrong_maximum_fails_the_check() {
    let rows = rows(300);
    let path = write("stale.parquet", &rows, Codec::None, 100);
    let (meta, _) = read(&path);
    let mut changed = rows.clone();
    let k = changed.iter().position(|r| r.i.is_some()).unwrap();
    changed[k].i = Some(i64::MAX);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_statistics(&meta, &changed, 100)));
    assert!(caught.is_err(), "a maximum that does not match its rows must fail");
}

#[test]
fn an_empty_table_is_a_valid_file() {
    let path = write("empty.parquet", &[], Codec::None, 100);
    let (meta, batches) = read(&path);
    assert_eq!(meta.file_metadata().num_rows(), 0);
    assert!(batches.iter().all(|b| b.num_rows() == 0));
}

/// Late columns: filled after every row group's other columns were
/// written, read back with the other columns' values and statistics
/// unchanged, and the late ones' values and statistics right in every row
/// group.
#[test]
fn late_columns_read_back_with_their_row_groups() {
    let rows = rows(530);
    let late_columns = [("extra_label", Kind::Str, ""), ("extra_n", Kind::I64, "")];
    for codec in [Codec::None, Codec::Snappy, Codec::Zstd(ZSTD_LEVEL)] {
        let out = tmp(&format!("late-{}.parquet", codec.name()));
        let mut t = ParquetTable::with_late_columns(&out, COLUMNS, &late_columns, codec, 64).unwrap();
        for r in &rows {
            t.row()
                .f64(r.f)
                .i64(r.i)
                .i32(r.n)
                .str(r.label.as_deref())
                .id(r.id.as_deref())
                .bool(r.b)
                .str(r.stat)
                .time_ns(r.t)
                .end();
            t.flush_if_full().unwrap();
        }
        let mut late = t.into_late().unwrap();
        assert_eq!(late.group_rows(), [64, 64, 64, 64, 64, 64, 64, 64, 18]);
        let mut k = 0;
        for g in 0..late.group_rows().len() {
            for _ in 0..late.group_rows()[g] {
                late.row().str(Some(LABELS[k % 2 + 2])).i64((k % 7 != 0).then_some(k as i64 * 3)).end();
                k += 1;
            }
            late.end_group().unwrap();
        }
        assert_eq!(late.close().unwrap(), out);
        let (meta, batches) = read(&out);
        check_values(&batches, &rows);
        check_statistics(&meta, &rows, 64);
        let mut k = 0;
        for b in &batches {
            let extra = strings(b, 8);
            let n = b.column(9).as_primitive::<Int64Type>();
            for (j, label) in extra.iter().enumerate() {
                assert_eq!(label.as_deref(), Some(LABELS[k % 2 + 2]));
                assert_eq!((!n.is_null(j)).then(|| n.value(j)), (k % 7 != 0).then_some(k as i64 * 3));
                k += 1;
            }
        }
        assert_eq!(k, rows.len());
        for (g, rg) in meta.row_groups().iter().enumerate() {
            match rg.column(9).statistics().unwrap() {
                Statistics::Int64(s) => {
                    let vals = (g * 64..(g * 64 + rg.num_rows() as usize)).filter(|k| k % 7 != 0).map(|k| k as i64 * 3);
                    assert_eq!(s.max_opt().copied(), vals.max());
                }
                other => panic!("extra_n: {other:?}"),
            }
        }
    }
}

/// A table whose late columns were not all written is refused at the end.
#[test]
#[should_panic(expected = "every row group gets its late columns")]
fn late_columns_left_unwritten_are_refused() {
    let mut t = ParquetTable::with_late_columns(
        &tmp("late-missing.parquet"),
        COLUMNS,
        &[("extra_n", Kind::I64, "")],
        Codec::None,
        2,
    )
    .unwrap();
    for r in &rows(3) {
        t.row()
            .f64(r.f)
            .i64(r.i)
            .i32(r.n)
            .str(r.label.as_deref())
            .id(r.id.as_deref())
            .bool(r.b)
            .str(r.stat)
            .time_ns(r.t)
            .end();
        t.flush_if_full().unwrap();
    }
    let mut late = t.into_late().unwrap();
    for _ in 0..2 {
        late.row().i64(Some(1)).end();
    }
    late.end_group().unwrap();
    late.close().unwrap();
}

/// `ParquetTable::extend` (rows filled a column at a time) writes the same
/// file, byte for byte, as the same rows filled one by one (the path checked
/// against the reader above), with runs empty, inside one row group, and
/// across several; and the values read back.
/// `Rows::label_split`: a run whose first rows carry one label and the rest
/// another (a connection's two sides) writes the same file, byte for byte,
/// as its rows filled one by one, with splits at 0, at the run's end and
/// across row group ends.
#[test]
fn a_split_label_run_equals_rows_filled_one_by_one() {
    const SPLIT_COLUMNS: &[ColumnDef] =
        &[("conn", Kind::I64, ""), ("uid", Kind::Id, ""), ("side", Kind::Str, ""), ("v", Kind::I64, "")];
    let runs: Vec<(usize, usize)> = (0..30).map(|c| (c * 5 % 7, c * 3 % 4)).collect();
    let value = |c: usize, i: usize| (c * 100 + i) as i64;
    let by_row = tmp("split-by-row.parquet");
    let mut t = ParquetTable::with_group_rows(&by_row, SPLIT_COLUMNS, Codec::None, 5).unwrap();
    for (c, &(a, b)) in runs.iter().enumerate() {
        for i in 0..a + b {
            let side = if i < a { "orig" } else { "resp" };
            let uid = format!("C{c}");
            t.row().i64(Some(c as i64)).id(Some(&uid)).str(Some(side)).i64(Some(value(c, i))).end();
            t.flush_if_full().unwrap();
        }
    }
    t.close().unwrap();
    let by_run = tmp("split-by-run.parquet");
    let mut t = ParquetTable::with_group_rows(&by_run, SPLIT_COLUMNS, Codec::None, 5).unwrap();
    for (c, &(a, b)) in runs.iter().enumerate() {
        t.extend(a + b, |r, at| {
            let first = a.clamp(at.start, at.end) - at.start;
            r.i64_all(c as i64)
                .id_all(&format!("C{c}"))
                .label_split(first, "orig", "resp")
                .i64_each(at.map(|i| value(c, i)));
        })
        .unwrap();
    }
    t.close().unwrap();
    assert_eq!(std::fs::read(&by_row).unwrap(), std::fs::read(&by_run).unwrap());
}

#[test]
fn runs_filled_by_column_equal_rows_filled_one_by_one() {
    const RUN_COLUMNS: &[ColumnDef] = &[
        ("conn", Kind::I64, ""),
        ("side", Kind::Str, ""),
        ("k", Kind::I32, ""),
        ("v", Kind::F64, ""),
        ("n", Kind::I64, ""),
    ];
    let runs: Vec<(i64, &'static str, Vec<i64>)> = (0..40i64)
        .map(|c| (c * 3 - 20, LABELS[c as usize % 3 + 1], (0..(c * 7 % 23)).map(|k| k * k - c).collect()))
        .collect();
    let by_row = tmp("runs-by-row.parquet");
    let mut t = ParquetTable::with_group_rows(&by_row, RUN_COLUMNS, Codec::None, 7).unwrap();
    for (conn, side, vals) in &runs {
        for (k, &v) in vals.iter().enumerate() {
            t.row().i64(Some(*conn)).str(Some(side)).i32(Some(k as i32)).f64(Some(v as f64 / 8.0)).i64(Some(v)).end();
            t.flush_if_full().unwrap();
        }
    }
    t.close().unwrap();
    let by_run = tmp("runs-by-column.parquet");
    let mut t = ParquetTable::with_group_rows(&by_run, RUN_COLUMNS, Codec::None, 7).unwrap();
    for (conn, side, vals) in &runs {
        t.extend(vals.len(), |r, at| {
            r.i64_all(*conn)
                .label_split(at.len(), side, side)
                .i32_each(at.clone().map(|k| k as i32))
                .f64_each(vals[at.clone()].iter().map(|&v| v as f64 / 8.0))
                .i64_each(vals[at].iter().copied());
        })
        .unwrap();
    }
    t.close().unwrap();
    assert_eq!(std::fs::read(&by_row).unwrap(), std::fs::read(&by_run).unwrap());
    let (meta, batches) = read(&by_run);
    let want: Vec<(i64, String, i32, i64)> = runs
        .iter()
        .flat_map(|(c, s, vals)| vals.iter().enumerate().map(move |(k, &v)| (*c, s.to_string(), k as i32, v)))
        .collect();
    assert_eq!(meta.num_row_groups(), want.len().div_ceil(7));
    let mut got = Vec::new();
    for b in &batches {
        let conn = b.column(0).as_primitive::<Int64Type>();
        let side = strings(b, 1);
        let k = b.column(2).as_primitive::<Int32Type>();
        let n = b.column(4).as_primitive::<Int64Type>();
        for (j, s) in side.iter().enumerate() {
            got.push((conn.value(j), s.clone().unwrap(), k.value(j), n.value(j)));
        }
    }
    assert_eq!(got, want);
}

#[test]
#[should_panic(expected = "one value per row")]
fn a_run_column_of_the_wrong_length_is_refused() {
    let mut t =
        ParquetTable::with_group_rows(&tmp("short-run.parquet"), &[("k", Kind::I32, "")], Codec::None, 7).unwrap();
    t.extend(3, |r, _| {
        r.i32_each([1, 2].into_iter());
    })
    .unwrap();
}

/// Each call fills the next column of its kind; a row that leaves a column
/// out (here the second I64 column) is refused: at `end()` in debug builds,
/// and in every build when its row group is written.
#[test]
fn a_row_missing_a_column_is_refused() {
    let caught = std::panic::catch_unwind(|| {
        let cols = &[("a", Kind::I64, ""), ("b", Kind::F64, ""), ("c", Kind::I64, "")];
        let mut t = ParquetTable::with_group_rows(&tmp("short-row.parquet"), cols, Codec::None, 7).unwrap();
        t.row().i64(Some(1)).f64(Some(2.0)).end();
        t.close().unwrap();
    });
    let e = caught.expect_err("a short row must be refused");
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    let want = if cfg!(debug_assertions) {
        "a row fills every column once"
    } else {
        "every column has a value or a null in each row"
    };
    assert!(msg.contains(want), "{msg}");
}

/// A row begun and dropped without `end()` leaves values in its columns
/// that no row owns: the row group is refused when written.
#[test]
#[should_panic(expected = "every column has a value or a null in each row")]
fn a_row_not_ended_is_refused_at_the_group() {
    let mut t =
        ParquetTable::with_group_rows(&tmp("unended.parquet"), &[("a", Kind::I64, "")], Codec::None, 7).unwrap();
    t.row().i64(Some(1)).end();
    let _ = t.row().i64(Some(2));
    t.close().unwrap();
}
