//! A list that keeps its first `N` items inline and moves to the heap only
//! beyond them, for the per-connection lists that are usually short (RTT
//! samples, trains, warm-ups, load bins): most connections never allocate
//! for them, neither while packets flow nor when their record is built
//! (the tracker's lists are moved into the record as they are).

use std::fmt;
use std::ops::Deref;

#[derive(Clone)]
pub struct List<T: Copy + Default, const N: usize> {
    /// The items while there are at most `N` (`inline[..len]`).
    inline: [T; N],
    len: usize,
    /// Every item once there are more than `N` (`inline` is then unused):
    /// the items stay one contiguous slice.
    heap: Vec<T>,
}

impl<T: Copy + Default, const N: usize> Default for List<T, N> {
    fn default() -> Self {
        List { inline: [T::default(); N], len: 0, heap: Vec::new() }
    }
}

impl<T: Copy + Default, const N: usize> List<T, N> {
    /// Inlined (it runs per DATA-ACK sample), the heap push too (RTT
    /// samples have a long tail: in the 300 k-packet tcpmix trace a third
    /// of the pushes land there); only the move to the heap is out of line.
    #[inline]
    pub fn push(&mut self, v: T) {
        if self.len < N {
            self.inline[self.len] = v;
        } else if self.len > N {
            self.heap.push(v);
        } else {
            self.move_to_heap(v);
        }
        self.len += 1;
    }

    /// Room for 4N items at once: lists that outgrow N are the long ones,
    /// and each growth is a reallocation and a copy.
    #[cold]
    fn move_to_heap(&mut self, v: T) {
        self.heap.reserve(4 * N.max(1));
        self.heap.extend_from_slice(&self.inline);
        self.heap.push(v);
    }

    pub fn as_slice(&self) -> &[T] {
        if self.len <= N {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }
}

impl<T: Copy + Default, const N: usize> Deref for List<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy + Default, const N: usize> FromIterator<T> for List<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut l = List::default();
        for v in iter {
            l.push(v);
        }
        l
    }
}

impl<'a, T: Copy + Default, const N: usize> IntoIterator for &'a List<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

/// Equal when the items are (the unused inline slots do not count).
impl<T: Copy + Default + PartialEq, const N: usize> PartialEq for List<T, N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Copy + Default + fmt::Debug, const N: usize> fmt::Debug for List<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_across_the_move_to_the_heap() {
        let mut l: List<u32, 3> = List::default();
        assert!(l.is_empty());
        // Past N, and past the 4N reserved when the items move.
        for i in 0..40 {
            l.push(i * 7);
            let want: Vec<u32> = (0..=i).map(|x| x * 7).collect();
            assert_eq!(l.to_vec(), want);
            assert_eq!(l.len(), want.len());
        }
        let mut same: List<u32, 3> = (0..40).map(|x| x * 7).collect();
        assert_eq!(l, same);
        same.push(1);
        assert_ne!(l, same);
        // Unused inline slots are not compared.
        let (mut a, b): (List<u32, 3>, List<u32, 3>) = (List::default(), List::default());
        a.inline[2] = 5;
        assert_eq!(a, b);
    }
}
