//! The part of Thrift's compact protocol that Parquet's page headers and
//! footer need, for writing only: structs, lists, booleans, i16/i32/i64 and
//! binary. Maps, sets, doubles and reading are not implemented.
//!
//! Wire format (Thrift's `doc/specs/thrift-compact-protocol.md`): a field is
//! a byte `delta << 4 | type` when its id is 1..=15 above the previous
//! field's id in the same struct (else the type byte, then the id as a
//! zigzag varint); a boolean field's value is its type (1 true, 2 false);
//! integers are zigzag varints; binary is a varint length
//! and the bytes; a list is a byte `size << 4 | element type` (size 15 or
//! more: `0xF0 | type`, then the size as a varint); a struct ends with a 0
//! byte.

const BOOLEAN_TRUE: u8 = 1;
const BOOLEAN_FALSE: u8 = 2;
pub const I16: u8 = 4;
pub const I32: u8 = 5;
pub const I64: u8 = 6;
pub const BINARY: u8 = 8;
pub const LIST: u8 = 9;
pub const STRUCT: u8 = 12;

/// Parquet nests structs five deep here (FileMetaData, RowGroup,
/// ColumnChunk, ColumnMetaData, Statistics).
const MAX_DEPTH: usize = 8;

/// Writes one top-level struct into `out`; `finish()` ends it.
pub struct Compact<'a> {
    out: &'a mut Vec<u8>,
    /// The last field id written at each nesting depth (0 at a struct's start).
    last: [i16; MAX_DEPTH],
    depth: usize,
}

impl<'a> Compact<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> Compact<'a> {
        Compact { out, last: [0; MAX_DEPTH], depth: 0 }
    }

    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.out.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.out.push(v as u8);
    }

    fn zigzag(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }

    fn field(&mut self, id: i16, ty: u8) {
        let delta = id - self.last[self.depth];
        if (1..=15).contains(&delta) {
            self.out.push((delta as u8) << 4 | ty);
        } else {
            self.out.push(ty);
            self.zigzag(id.into());
        }
        self.last[self.depth] = id;
    }

    pub fn bool(&mut self, id: i16, v: bool) -> &mut Self {
        self.field(id, if v { BOOLEAN_TRUE } else { BOOLEAN_FALSE });
        self
    }

    pub fn i16(&mut self, id: i16, v: i16) -> &mut Self {
        self.field(id, I16);
        self.zigzag(v.into());
        self
    }

    pub fn i32(&mut self, id: i16, v: i32) -> &mut Self {
        self.field(id, I32);
        self.zigzag(v.into());
        self
    }

    pub fn i64(&mut self, id: i16, v: i64) -> &mut Self {
        self.field(id, I64);
        self.zigzag(v);
        self
    }

    pub fn binary(&mut self, id: i16, v: &[u8]) -> &mut Self {
        self.field(id, BINARY);
        self.elem_binary(v);
        self
    }

    /// Opens a struct-valued field; close it with `end()`.
    pub fn begin(&mut self, id: i16) -> &mut Self {
        self.field(id, STRUCT);
        self.enter();
        self
    }

    /// Opens a struct that is a list element; close it with `end()`.
    pub fn begin_elem(&mut self) -> &mut Self {
        self.enter();
        self
    }

    fn enter(&mut self) {
        self.depth += 1;
        assert!(self.depth < MAX_DEPTH, "Parquet's structs nest less deeply");
        self.last[self.depth] = 0;
    }

    pub fn end(&mut self) -> &mut Self {
        self.out.push(0);
        self.depth -= 1;
        self
    }

    /// A list-valued field of `n` elements of type `elem`, which follow.
    pub fn list(&mut self, id: i16, elem: u8, n: usize) -> &mut Self {
        self.field(id, LIST);
        if n < 15 {
            self.out.push((n as u8) << 4 | elem);
        } else {
            self.out.push(0xF0 | elem);
            self.varint(n as u64);
        }
        self
    }

    pub fn elem_i32(&mut self, v: i32) -> &mut Self {
        self.zigzag(v.into());
        self
    }

    pub fn elem_binary(&mut self, v: &[u8]) -> &mut Self {
        self.varint(v.len() as u64);
        self.out.extend_from_slice(v);
        self
    }

    /// Ends the top-level struct.
    pub fn finish(&mut self) {
        assert_eq!(self.depth, 0, "a nested struct was left open");
        self.out.push(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes worked out by hand from the compact protocol's specification.
    #[test]
    fn encodes_as_the_spec_says() {
        let mut out = Vec::new();
        let mut c = Compact::new(&mut out);
        c.i32(1, 3) // delta 1, I32; zigzag(3) = 6
            .i16(2, -3) // delta 1, I16; zigzag(-3) = 5
            .i64(3, -1) // delta 1, I64; zigzag(-1) = 1
            .binary(4, b"ab") // delta 1, BINARY; length 2
            .i32(20, 0) // delta 16: long form, id zigzag(20) = 40
            .begin(21) // delta 1, STRUCT
            .i32(1, 300) // zigzag 600 = 0xD8 0x04
            .bool(2, true) // delta 1, BOOLEAN_TRUE: no value byte
            .bool(3, false) // delta 1, BOOLEAN_FALSE
            .end()
            .list(22, I32, 2)
            .elem_i32(-2)
            .elem_i32(2)
            .list(23, STRUCT, 16);
        for _ in 0..16 {
            c.begin_elem().end();
        }
        c.finish();
        let mut want = vec![
            0x15, 6, 0x14, 5, 0x16, 1, 0x18, 2, b'a', b'b', 0x05, 40, 0, 0x1C, 0x15, 0xD8, 0x04, 0x11, 0x12, 0, 0x19,
            0x25, 3, 4, 0x19, 0xFC, 16,
        ];
        want.extend([0; 16]);
        want.push(0);
        assert_eq!(out, want);
    }
}
