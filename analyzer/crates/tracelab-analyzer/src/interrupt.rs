//! SIGINT and SIGTERM end a profile cleanly: the handler only records the
//! signal; the driver polls [`pending`] between batches of frames and
//! returns [`crate::driver::ProfileError::Interrupted`], the partial output
//! directory is removed on the way out, and the binary ends by the same
//! signal ([`reraise`]), so its parent sees what killed it.

use std::sync::atomic::{AtomicI32, Ordering};

static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn record(signal: libc::c_int) {
    // Async-signal-safe: one atomic store.
    SIGNAL.store(signal, Ordering::Relaxed);
}

/// Installs the handlers (SIGINT, SIGTERM) and ignores SIGXFSZ, so that a
/// file-size limit (`ulimit -f`) is an output error (EFBIG, exit 4) like a
/// full disk rather than a kill.
pub fn install() {
    // SAFETY: `record` is async-signal-safe; the sigaction is zeroed and
    // filled before use.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = record as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        for signal in [libc::SIGINT, libc::SIGTERM] {
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// The signal received since [`install`], if any.
pub fn pending() -> Option<i32> {
    match SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// Ends the process by `signal` with its default action (after the caller
/// has cleaned up); 128 + signal if it does not end it.
pub fn reraise(signal: i32) -> ! {
    // SAFETY: restoring the default action and raising are plain libc calls.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
    std::process::exit(128 + signal)
}
