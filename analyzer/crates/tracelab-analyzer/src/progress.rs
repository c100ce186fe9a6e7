//! Progress on a terminal: packets, MB, rate and ETA (from the file size).
//! Silent when stderr is not a terminal or `--no-progress` is given.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
}

impl Progress {
    pub fn new(enabled: bool, size: Option<u64>) -> Progress {
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(size, ProgressDrawTarget::stderr_with_hz(4));
            let style = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta} {msg}",
            )
            .expect("valid template");
            bar.set_style(style);
            bar
        });
        Progress { bar, started: Instant::now() }
    }

    pub fn update(&self, packets: u64, offset: u64) {
        if let Some(bar) = &self.bar {
            let secs = self.started.elapsed().as_secs_f64().max(1e-9);
            bar.set_position(offset);
            bar.set_message(format!("{packets} packets, {:.2} Mpkt/s", packets as f64 / secs / 1e6));
        }
    }

    pub fn finish(&self, packets: u64, offset: u64) {
        if let Some(bar) = &self.bar {
            self.update(packets, offset);
            bar.finish_and_clear();
        }
    }
}
