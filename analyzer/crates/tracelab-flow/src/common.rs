//! The connection-level state the TCP analyzer ([`crate::tcp`]) and the
//! connection table ([`crate::tracker`]) both update: history, roles,
//! inactivity, missed bytes.

/// Connection-level state Zeek keeps in `Connection`/`Session`.
#[derive(Clone, Debug)]
pub(crate) struct Common {
    pub history: String,
    /// Zeek's `hist_seen`: originator bits low, responder bits << 16, by
    /// the role at the time the letter was recorded (not swapped on flips).
    pub hist_seen: u32,
    /// The slot (0 = sender of the first packet) currently the originator.
    pub orig_slot: usize,
    pub last_ns: i64,
    pub inactivity_ns: i64,
    pub missed_bytes: u64,
}

impl Common {
    pub fn check_history(&mut self, mask: u32, code: char) -> bool {
        if self.hist_seen & mask == 0 {
            self.hist_seen |= mask;
            self.history.push(code);
            false
        } else {
            true
        }
    }

    pub fn set_inactivity(&mut self, t: i64) {
        self.inactivity_ns = t;
    }

    /// Conn::FlipRoles: the role swap and its '^' history letter.
    pub fn flip(&mut self) {
        self.orig_slot ^= 1;
        self.history.push('^');
    }
}
