//! Where messages and progress go (stderr in the program, a buffer in tests).

use std::io::Write;
use std::sync::Mutex;

/// A shared, line-oriented message sink.
pub struct Console {
    out: Mutex<Box<dyn Write + Send>>,
    tty: bool,
}

impl Console {
    /// A console writing to `out`; `tty` selects the progress bar instead of pgbench's lines.
    pub fn new(out: Box<dyn Write + Send>, tty: bool) -> Console {
        Console {
            out: Mutex::new(out),
            tty,
        }
    }

    /// The process's stderr, with `tty` detected.
    pub fn stderr() -> Console {
        use std::io::IsTerminal;
        let tty = std::io::stderr().is_terminal();
        Console::new(Box::new(std::io::stderr()), tty)
    }

    /// True when progress should be drawn as a bar.
    pub fn is_tty(&self) -> bool {
        self.tty
    }

    /// Writes `text` as is and flushes. Write errors are ignored, as pgbench ignores them.
    pub fn write(&self, text: &(impl AsRef<[u8]> + ?Sized)) {
        let mut out = match self.out.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let _ = out.write_all(text.as_ref());
        let _ = out.flush();
    }

    /// Writes `text` followed by a newline.
    pub fn line(&self, text: &str) {
        self.write(&format!("{text}\n"));
    }
}

#[cfg(test)]
pub(crate) mod capture {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    /// A `Write` into a shared buffer, for tests.
    #[derive(Clone, Default)]
    pub struct Captured(pub Arc<Mutex<Vec<u8>>>);

    impl Captured {
        pub fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
        }
    }

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
}
