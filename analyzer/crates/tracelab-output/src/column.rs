//! One column's values for a row group, kept already close to their Parquet
//! encoding, and the encoding of its data page body (Parquet's
//! `Encodings.md`): definition levels as an RLE/bit-packed hybrid, values
//! PLAIN, or dictionary indices (RLE_DICTIONARY) for labels.
//!
//! Columns are typed (`Column<V>`) and a table keeps them in one list per
//! kind (`Columns`), so filling a cell reaches its vector without a match on
//! the kind; the writer sees them through `Encode`, once per column chunk.
//! A `Kind::Time` column is a column of i64 microseconds: only the schema
//! (file.rs) tells it from an I64 one.

use crate::schema::Kind;

/// A column of one row group. Only non-null values are stored (PLAIN and
/// dictionary pages leave nulls out too), and the rows that have none are
/// listed, so a value costs one push and a null one push. The row count is
/// the table's (`TableBuilder`), kept once for all columns.
pub(crate) struct Column<V> {
    pub(crate) values: V,
    /// The rows without a value, ascending.
    nulls: Vec<u32>,
}

/// `Kind::Id`: the values already in PLAIN form (u32 LE length, bytes), so
/// the page body is one copy; and their count.
pub(crate) struct Plain {
    pub(crate) bytes: Vec<u8>,
    pub(crate) count: usize,
}

/// `Kind::Str`: each value's index in the chunk's dictionary.
pub(crate) struct Dict {
    pub(crate) keys: Vec<u32>,
    pub(crate) dict: Dictionary,
}

/// A statistic's bytes as Parquet stores min_value/max_value for numbers
/// and booleans: little-endian, `len` bytes long.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MinMax {
    pub(crate) min: [u8; 8],
    pub(crate) max: [u8; 8],
    pub(crate) len: usize,
}

impl MinMax {
    fn of<const N: usize>(min: [u8; N], max: [u8; N]) -> MinMax {
        let mut m = MinMax { min: [0; 8], max: [0; 8], len: N };
        m.min[..N].copy_from_slice(&min);
        m.max[..N].copy_from_slice(&max);
        m
    }
}

/// The non-null values of one kind of column.
pub(crate) trait Values {
    fn with_capacity(rows: usize) -> Self;
    /// How many values.
    fn count(&self) -> usize;
    fn clear(&mut self);
    /// The dictionary page's body (PLAIN values) and entry count, for a
    /// dictionary-encoded column.
    fn dictionary(&self) -> Option<(&[u8], usize)> {
        None
    }
    /// Appends the values' part of the data page body to `out`, or returns
    /// it when it is already laid out in PLAIN form (written after `out`
    /// without a copy); and the min/max of numbers and booleans (none for
    /// strings, or when there is no value but NaN).
    fn encode<'a>(&'a self, out: &mut Vec<u8>) -> (&'a [u8], Option<MinMax>);
}

/// The storage methods every column kept in a `Vec` shares.
macro_rules! vec_storage {
    () => {
        fn with_capacity(rows: usize) -> Self {
            Vec::with_capacity(rows)
        }
        fn count(&self) -> usize {
            self.len()
        }
        fn clear(&mut self) {
            Vec::clear(self);
        }
    };
}

impl Values for Vec<f64> {
    vec_storage!();
    fn encode<'a>(&'a self, out: &mut Vec<u8>) -> (&'a [u8], Option<MinMax>) {
        // Comparisons with NaN are false, so NaNs are skipped; only NaNs (or
        // nothing) leave min > max. Four lanes, which the compiler turns
        // into packed min/max instructions.
        let (mut lo, mut hi) = ([f64::INFINITY; 4], [f64::NEG_INFINITY; 4]);
        let quads = self.chunks_exact(4);
        let rest = quads.remainder();
        for q in quads {
            for k in 0..4 {
                lo[k] = if q[k] < lo[k] { q[k] } else { lo[k] };
                hi[k] = if q[k] > hi[k] { q[k] } else { hi[k] };
            }
        }
        for (k, &x) in rest.iter().enumerate() {
            lo[k] = if x < lo[k] { x } else { lo[k] };
            hi[k] = if x > hi[k] { x } else { hi[k] };
        }
        let min = lo.into_iter().fold(f64::INFINITY, |a, x| if x < a { x } else { a });
        let max = hi.into_iter().fold(f64::NEG_INFINITY, |a, x| if x > a { x } else { a });
        // The format asks for -0.0 as a zero minimum and +0.0 as a zero
        // maximum, whichever zeros the values had.
        let min = if min == 0.0 { -0.0 } else { min };
        let max = if max == 0.0 { 0.0 } else { max };
        (plain(self, out), (min <= max).then(|| MinMax::of(min.to_le_bytes(), max.to_le_bytes())))
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl Values for Vec<$t> {
            vec_storage!();
            fn encode<'a>(&'a self, out: &mut Vec<u8>) -> (&'a [u8], Option<MinMax>) {
                (plain(self, out), min_max(self).map(|(lo, hi)| MinMax::of(lo.to_le_bytes(), hi.to_le_bytes())))
            }
        }
    )*};
}
integers!(i64, i32);

impl Values for Vec<bool> {
    vec_storage!();
    fn encode<'a>(&'a self, out: &mut Vec<u8>) -> (&'a [u8], Option<MinMax>) {
        // PLAIN booleans: one bit each, least significant bit first.
        pack_bits(self, out);
        let (min, max) = (self.iter().all(|&x| x), self.iter().any(|&x| x));
        (&[], (!self.is_empty()).then(|| MinMax::of([u8::from(min)], [u8::from(max)])))
    }
}

impl Values for Plain {
    fn with_capacity(rows: usize) -> Self {
        Plain { bytes: Vec::with_capacity(rows * ID_BYTES), count: 0 }
    }
    fn count(&self) -> usize {
        self.count
    }
    fn clear(&mut self) {
        self.bytes.clear();
        self.count = 0;
    }
    fn encode<'a>(&'a self, _: &mut Vec<u8>) -> (&'a [u8], Option<MinMax>) {
        (&self.bytes, None)
    }
}

impl Values for Dict {
    fn with_capacity(rows: usize) -> Self {
        Dict { keys: Vec::with_capacity(rows), dict: Dictionary::new() }
    }
    fn count(&self) -> usize {
        self.keys.len()
    }
    fn clear(&mut self) {
        self.keys.clear();
        self.dict.clear();
    }
    fn dictionary(&self) -> Option<(&[u8], usize)> {
        Some((&self.dict.plain, self.dict.len()))
    }
    fn encode<'a>(&'a self, out: &mut Vec<u8>) -> (&'a [u8], Option<MinMax>) {
        // RLE_DICTIONARY: the index bit width in one byte, then the indices
        // as a hybrid run (no length prefix). Width 1 at least: some readers
        // do not take a width of 0.
        let width = (u32::BITS - (self.dict.len().max(2) as u32 - 1).leading_zeros()) as u8;
        out.push(width);
        hybrid(&self.keys, width, out);
        (&[], None)
    }
}

impl<V: Values> Column<V> {
    fn new(rows: usize) -> Column<V> {
        Column { values: V::with_capacity(rows), nulls: Vec::new() }
    }

    /// Lists `row` as one without a value.
    #[inline]
    pub(crate) fn null(&mut self, row: usize) {
        self.nulls.push(u32::try_from(row).expect("a row group's rows are numbered in 32 bits"));
    }
}

/// A column as the file writer sees it, whatever its kind.
pub(crate) trait Encode {
    /// Rows filled: values and nulls.
    fn rows(&self) -> usize;
    fn nulls(&self) -> usize;
    /// The dictionary page's body and entry count, for a dictionary-encoded
    /// column (labels): its data page then holds indices (RLE_DICTIONARY).
    fn dictionary(&self) -> Option<(&[u8], usize)>;
    /// Appends the data page body (format v1, no repetition levels: the
    /// schema is flat) to `out`, except PLAIN values already laid out in the
    /// column (numbers, ids): those are returned as the body's tail, to be
    /// written after `out` without a copy. Also returns the min/max of
    /// numbers and booleans.
    fn encode_page<'a>(&'a self, rows: usize, out: &mut Vec<u8>) -> (&'a [u8], Option<MinMax>);
    /// Empties the column for the next row group, keeping its buffers.
    fn clear(&mut self);
}

impl<V: Values> Encode for Column<V> {
    fn rows(&self) -> usize {
        self.values.count() + self.nulls.len()
    }
    fn nulls(&self) -> usize {
        self.nulls.len()
    }
    fn dictionary(&self) -> Option<(&[u8], usize)> {
        self.values.dictionary()
    }
    fn encode_page<'a>(&'a self, rows: usize, out: &mut Vec<u8>) -> (&'a [u8], Option<MinMax>) {
        // Definition levels (every column is OPTIONAL): a u32 byte length,
        // then the levels (1 = a value) at bit width 1.
        let at = out.len();
        out.extend_from_slice(&[0; 4]);
        // No nulls: one RLE run. Otherwise one bit-packed run, built from
        // the null list (all ones, a bit cleared per null, the last group's
        // padding zero): a few bytes more than runs would take where values
        // cluster, for no scan of the rows.
        if self.nulls.is_empty() {
            rle_run(rows, 1, 1, out);
        } else {
            let groups = rows.div_ceil(8);
            varint((groups as u64) << 1 | 1, out);
            let start = out.len();
            out.resize(start + groups, 0xFF);
            if !rows.is_multiple_of(8) {
                out[start + groups - 1] = (1u8 << (rows % 8)) - 1;
            }
            for &row in &self.nulls {
                out[start + row as usize / 8] &= !(1 << (row % 8));
            }
        }
        let levels = (out.len() - at - 4) as u32;
        out[at..at + 4].copy_from_slice(&levels.to_le_bytes());
        self.values.encode(out)
    }
    fn clear(&mut self) {
        self.nulls.clear();
        self.values.clear();
    }
}

/// A table's columns for one row group: one list per kind, and the schema
/// order as (kind, index in its list).
pub(crate) struct Columns {
    pub(crate) f64s: Vec<Column<Vec<f64>>>,
    pub(crate) i64s: Vec<Column<Vec<i64>>>,
    pub(crate) i32s: Vec<Column<Vec<i32>>>,
    /// `Kind::Time`: microseconds since the epoch.
    pub(crate) times: Vec<Column<Vec<i64>>>,
    pub(crate) bools: Vec<Column<Vec<bool>>>,
    pub(crate) ids: Vec<Column<Plain>>,
    pub(crate) labels: Vec<Column<Dict>>,
    order: Vec<(Kind, usize)>,
}

/// How many columns of each kind, or how many of each a row has filled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PerKind {
    pub(crate) f64: usize,
    pub(crate) i64: usize,
    pub(crate) i32: usize,
    pub(crate) time: usize,
    pub(crate) bool: usize,
    pub(crate) id: usize,
    pub(crate) label: usize,
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

impl Columns {
    /// Columns of `kinds`, in that order, with room for `rows` rows.
    pub(crate) fn new(kinds: impl IntoIterator<Item = Kind>, rows: usize) -> Columns {
        let mut count = PerKind::default();
        let order: Vec<(Kind, usize)> = kinds
            .into_iter()
            .map(|k| {
                let n = count.of(k);
                *n += 1;
                (k, *n - 1)
            })
            .collect();
        Columns {
            f64s: (0..count.f64).map(|_| Column::new(rows)).collect(),
            i64s: (0..count.i64).map(|_| Column::new(rows)).collect(),
            i32s: (0..count.i32).map(|_| Column::new(rows)).collect(),
            times: (0..count.time).map(|_| Column::new(rows)).collect(),
            bools: (0..count.bool).map(|_| Column::new(rows)).collect(),
            ids: (0..count.id).map(|_| Column::new(rows)).collect(),
            labels: (0..count.label).map(|_| Column::new(rows)).collect(),
            order,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// How many columns of each kind.
    pub(crate) fn per_kind(&self) -> PerKind {
        PerKind {
            f64: self.f64s.len(),
            i64: self.i64s.len(),
            i32: self.i32s.len(),
            time: self.times.len(),
            bool: self.bools.len(),
            id: self.ids.len(),
            label: self.labels.len(),
        }
    }

    /// The `i`th column in schema order.
    pub(crate) fn get(&mut self, i: usize) -> &mut dyn Encode {
        let (kind, k) = self.order[i];
        match kind {
            Kind::F64 => &mut self.f64s[k],
            Kind::I64 => &mut self.i64s[k],
            Kind::I32 => &mut self.i32s[k],
            Kind::Time => &mut self.times[k],
            Kind::Bool => &mut self.bools[k],
            Kind::Id => &mut self.ids[k],
            Kind::Str => &mut self.labels[k],
        }
    }
}

fn min_max<T: Ord + Copy>(v: &[T]) -> Option<(T, T)> {
    let (&first, rest) = v.split_first()?;
    let (mut min, mut max) = (first, first);
    for &x in rest {
        min = if x < min { x } else { min };
        max = if x > max { x } else { max };
    }
    Some((min, max))
}

/// Bytes reserved per `Kind::Id` value: uids are 18 bytes, IPv4 addresses
/// up to 15, plus the 4-byte length.
const ID_BYTES: usize = 22;

/// Fixed-size numbers whose PLAIN encoding is their little-endian bytes.
trait Number: Copy {
    fn put_le(self, out: &mut Vec<u8>);
}

macro_rules! number {
    ($($t:ty),*) => {$(
        impl Number for $t {
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
number!(i32, i64, f64);

/// PLAIN numbers: on a little-endian machine, the vector's own bytes
/// (returned); elsewhere converted into `out`.
fn plain<'a, T: Number>(v: &'a [T], out: &mut Vec<u8>) -> &'a [u8] {
    if cfg!(target_endian = "little") {
        // SAFETY: T is i32, i64 or f64 (the `Number` impls): no padding,
        // every byte initialised, and u8 has no alignment to respect.
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
    } else {
        for &x in v {
            x.put_le(out);
        }
        &[]
    }
}

/// One RLE run: `n` copies of `value`, stored in `ceil(width / 8)` bytes.
fn rle_run(n: usize, value: u32, width: u8, out: &mut Vec<u8>) {
    varint((n as u64) << 1, out);
    out.extend_from_slice(&value.to_le_bytes()[..usize::from(width).div_ceil(8)]);
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The RLE/bit-packed hybrid encoding of `vals` (each below 2^width): runs
/// of at least 8 equal values that can start on a group boundary become RLE
/// runs, everything else is bit-packed in groups of 8 (the last group padded
/// with zeros; readers know the value count from the page header).
fn hybrid<T: Copy + PartialEq + Into<u32>>(vals: &[T], width: u8, out: &mut Vec<u8>) {
    let mut packed_from = 0;
    let mut i = 0;
    while i < vals.len() {
        let mut j = i + 1;
        while j < vals.len() && vals[j] == vals[i] {
            j += 1;
        }
        // A bit-packed stretch must end on a group of 8: the first `pad`
        // values of the run complete the pending group.
        let pad = (8 - (i - packed_from) % 8) % 8;
        if j - i >= pad + 8 {
            bit_pack(&vals[packed_from..i + pad], width, out);
            rle_run(j - i - pad, vals[i].into(), width, out);
            packed_from = j;
        }
        i = j;
    }
    bit_pack(&vals[packed_from..], width, out);
}

/// One bit-packed run of `vals`, least significant bit first, padded to a
/// whole group of 8.
fn bit_pack<T: Copy + Into<u32>>(vals: &[T], width: u8, out: &mut Vec<u8>) {
    if vals.is_empty() {
        return;
    }
    let groups = vals.len().div_ceil(8);
    varint((groups as u64) << 1 | 1, out);
    if width == 1 {
        // Definition levels: a byte per group, without the general loop.
        pack_bits(vals, out);
        return;
    }
    let (mut acc, mut bits) = (0u64, 0u32);
    for k in 0..groups * 8 {
        let v = vals.get(k).map_or(0, |&v| v.into());
        acc |= u64::from(v) << bits;
        bits += u32::from(width);
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
}

/// Values of 0 and 1 at one bit each, least significant bit first; the
/// last byte padded with zeros.
fn pack_bits<T: Copy + Into<u32>>(vals: &[T], out: &mut Vec<u8>) {
    out.extend(vals.chunks(8).map(|g| g.iter().rev().fold(0u8, |b, &x| b << 1 | x.into() as u8)));
}

/// The distinct values of a dictionary-encoded column chunk, in first-seen
/// order, with an open-addressing table from value to index.
pub(crate) struct Dictionary {
    /// The values in PLAIN form (u32 LE length, bytes): the dictionary page.
    plain: Vec<u8>,
    /// Where each value's bytes are in `plain` (after its length), and its
    /// hash's low 32 bits, compared before the bytes.
    spans: Vec<(u32, u32, u32)>,
    /// Index + 1 of the value stored at each slot; 0 is empty. Never more
    /// than half full.
    slots: Vec<u32>,
    /// Labels interned lately, by address: (address, length, index + 1).
    /// Labels mostly come from a few constant strings, so a label's address
    /// finds its index with one comparison of its bytes and no hashing.
    recent: [(usize, usize, u32); 16],
}

impl Dictionary {
    fn new() -> Dictionary {
        Dictionary { plain: Vec::new(), spans: Vec::new(), slots: vec![0; 64], recent: [(0, 0, 0); 16] }
    }

    fn len(&self) -> usize {
        self.spans.len()
    }

    fn value(&self, key: u32) -> &[u8] {
        let (start, len, _) = self.spans[key as usize];
        &self.plain[start as usize..(start + len) as usize]
    }

    fn clear(&mut self) {
        self.plain.clear();
        self.spans.clear();
        self.slots.fill(0);
        self.recent = [(0, 0, 0); 16];
    }

    /// `intern`, first looking the label up by its address among those
    /// interned lately. A hit is checked against the stored bytes (the same
    /// address may hold another string by now), so any `&str` may come.
    #[inline(always)]
    pub(crate) fn intern_str(&mut self, v: &str) -> u32 {
        let at = v.as_ptr() as usize;
        let slot = ((at as u64).wrapping_mul(FIBONACCI) >> 60) as usize;
        match self.recent[slot] {
            (a, len, key) if a == at && len == v.len() && key > 0 && self.value(key - 1) == v.as_bytes() => key - 1,
            _ => self.intern_recent(v, slot),
        }
    }

    #[cold]
    #[inline(never)]
    fn intern_recent(&mut self, v: &str, slot: usize) -> u32 {
        let key = self.intern(v.as_bytes());
        self.recent[slot] = (v.as_ptr() as usize, v.len(), key + 1);
        key
    }

    /// The value's index, adding it if new.
    #[inline]
    pub(crate) fn intern(&mut self, v: &[u8]) -> u32 {
        let mask = self.slots.len() - 1;
        let h = hash(v);
        let mut i = slot(h, mask);
        loop {
            match self.slots[i] {
                0 => break,
                s if self.spans[s as usize - 1].2 == h as u32 && self.value(s - 1) == v => return s - 1,
                _ => i = (i + 1) & mask,
            }
        }
        let key = self.spans.len() as u32;
        let len = u32::try_from(v.len()).expect("a label is shorter than 4 GiB");
        self.plain.extend_from_slice(&len.to_le_bytes());
        self.spans.push((self.plain.len() as u32, len, h as u32));
        self.plain.extend_from_slice(v);
        self.slots[i] = key + 1;
        if self.spans.len() * 2 > self.slots.len() {
            self.grow();
        }
        key
    }

    fn grow(&mut self) {
        let mut slots = vec![0u32; self.slots.len() * 2];
        let mask = slots.len() - 1;
        for key in 0..self.spans.len() as u32 {
            let mut i = slot(hash(self.value(key)), mask);
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = key + 1;
        }
        self.slots = slots;
    }
}

const FIBONACCI: u64 = 0x9E37_79B9_7F4A_7C15;

/// A hash's slot in a table of `mask + 1` slots: its top bits after a
/// multiplication by 2^64 / phi (Fibonacci hashing), which depend on all
/// of the hash's bits. Measured only together with three other output
/// changes (one-pass min/max, no page-buffer copy, the static-label cache
/// hit inlined): callgrind, tcpmix 300 k packets, 648.4 M -> 619.7 M
/// instructions (364e899; docs/performance-history.md, analyzer step 11).
#[inline]
fn slot(h: u64, mask: usize) -> usize {
    (h.wrapping_mul(FIBONACCI) >> (u64::BITS - mask.count_ones())) as usize
}

/// FxHash over 8-byte words.
#[inline]
fn hash(v: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = v.len() as u64;
    let mut words = v.chunks_exact(8);
    for w in &mut words {
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w.try_into().expect("8 bytes"))).wrapping_mul(K);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes the hybrid encoding the way the format describes it, as a
    /// check of the encoder's run choices.
    fn unhybrid(mut b: &[u8], width: u8, n: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let bytes = usize::from(width).div_ceil(8);
        while out.len() < n {
            let (mut h, mut shift) = (0u64, 0);
            loop {
                let x = b[0];
                b = &b[1..];
                h |= u64::from(x & 0x7f) << shift;
                shift += 7;
                if x < 0x80 {
                    break;
                }
            }
            if h & 1 == 0 {
                let mut v = [0u8; 4];
                v[..bytes].copy_from_slice(&b[..bytes]);
                b = &b[bytes..];
                out.extend(std::iter::repeat_n(u32::from_le_bytes(v), (h >> 1) as usize));
            } else {
                let count = (h >> 1) as usize * 8;
                for k in 0..count {
                    let bit = k * usize::from(width);
                    let mut v = 0u32;
                    for j in 0..usize::from(width) {
                        v |= u32::from(b[(bit + j) / 8] >> ((bit + j) % 8) & 1) << j;
                    }
                    out.push(v);
                }
                b = &b[count * usize::from(width) / 8..];
            }
        }
        assert!(b.is_empty(), "bytes left over");
        out.truncate(n);
        out
    }

    #[test]
    fn hybrid_round_trips_runs_and_scatter() {
        let mut rng = 7u64;
        for case in 0..200 {
            let width = [1u8, 2, 3, 7, 9, 17][case % 6];
            let n = case * 3 % 97;
            let mut vals = Vec::new();
            while vals.len() < n {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let v = (rng >> 33) as u32 & ((1 << width) - 1);
                let run = if rng & 3 == 0 { (rng >> 8) as usize % 30 } else { 1 };
                vals.extend(std::iter::repeat_n(v, run.min(n - vals.len()).max(1)));
            }
            let mut out = Vec::new();
            hybrid(&vals, width, &mut out);
            assert_eq!(unhybrid(&out, width, vals.len()), vals, "width {width}");
        }
    }

    #[test]
    fn a_constant_page_is_one_rle_run() {
        let mut out = Vec::new();
        hybrid(&[true; 1000], 1, &mut out);
        assert_eq!(out, [0xD0, 0x0F, 1]); // varint(2000), value 1
    }

    #[test]
    fn dictionary_interns_by_content_across_growth() {
        let mut d = Dictionary::new();
        let words: Vec<String> = (0..500).map(|i| format!("v{i}")).collect();
        for (i, w) in words.iter().enumerate() {
            assert_eq!(d.intern(w.as_bytes()), i as u32);
        }
        for (i, w) in words.iter().enumerate().rev() {
            assert_eq!(d.intern(w.as_bytes()), i as u32);
        }
        assert_eq!(d.intern(b""), 500);
        assert_eq!(d.value(3), b"v3");
        // Labels looked up by address find the same indices, before and
        // after a clear, and a reused address with new bytes is not taken
        // for the old label.
        let mut buf = String::from("v9");
        assert_eq!(d.intern_str(&buf), 9);
        buf.replace_range(.., "v8");
        assert_eq!(d.intern_str(&buf), 8);
        for _ in 0..2 {
            assert_eq!(d.intern_str("v7"), 7);
            assert_eq!(d.intern_str("new"), 501);
            assert_eq!(d.intern(b"new"), 501);
            assert_eq!(d.intern_str("v7"), 7);
            d.clear();
            assert_eq!(d.intern_str("x"), 0);
            assert_eq!(d.intern_str(""), 1);
            assert_eq!(d.intern(b"x"), 0);
            for w in &words {
                d.intern(w.as_bytes());
            }
            d.intern(b"");
            d.clear();
            for w in &words {
                d.intern(w.as_bytes());
            }
            d.intern(b"");
        }
    }
}
