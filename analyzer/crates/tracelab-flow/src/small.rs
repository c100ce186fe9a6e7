//! A list that keeps its first `N` items inside the connection state and
//! only goes to the heap beyond them, for the per-connection lists that
//! are usually short (RTT samples, trains): most connections then never
//! allocate while packets flow, and the record's `Vec` is built once, at
//! its exact size, when the connection finishes.

#[derive(Clone, Debug)]
pub(crate) struct SmallList<T: Copy + Default, const N: usize> {
    inline: [T; N],
    /// Items past the first `N`, in order.
    spill: Vec<T>,
    len: usize,
}

impl<T: Copy + Default, const N: usize> Default for SmallList<T, N> {
    fn default() -> Self {
        SmallList {
            inline: [T::default(); N],
            spill: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Copy + Default, const N: usize> SmallList<T, N> {
    pub fn push(&mut self, v: T) {
        if self.len < N {
            self.inline[self.len] = v;
        } else {
            self.spill.push(v);
        }
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// The items in order: the inline part, then the spilled one.
    pub fn parts(&self) -> (&[T], &[T]) {
        (&self.inline[..self.len.min(N)], &self.spill)
    }

    /// The items as a `Vec` of exactly their number.
    pub fn to_vec(&self) -> Vec<T> {
        let (a, b) = self.parts();
        let mut v = Vec::with_capacity(self.len);
        v.extend_from_slice(a);
        v.extend_from_slice(b);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_across_the_spill() {
        let mut l: SmallList<u32, 3> = SmallList::default();
        assert!(l.to_vec().is_empty());
        for i in 0..10 {
            l.push(i * 7);
            let want: Vec<u32> = (0..=i).map(|x| x * 7).collect();
            assert_eq!(l.to_vec(), want);
            assert_eq!(l.len(), want.len());
        }
        let (a, b) = l.parts();
        assert_eq!((a.len(), b.len()), (3, 7));
    }
}
