//! Input buffers: every input is read (`read(2)`) into a buffer this process owns.
//!
//! Nothing is memory-mapped. A mapped file that another process truncates while it is
//! parsed (log rotation, a `kubectl get > file` still writing) kills the reader with
//! `SIGBUS` on the next access past the new end, and a private mapping does not prevent
//! it: pages not yet copied stay backed by the file. Recovering from `SIGBUS` is not
//! sound in Rust, so the bytes are copied once; a file that shrinks while read is simply
//! read short, and its shorter content is what gets parsed (see `open_input` in the crate
//! root, which reports it).
//!
//! The parallel JSON reader ([`crate::split`]) patches a few bytes of the buffer
//! ([`Input::patch`]) and puts them back ([`Input::restore`]).

/// One input's bytes.
pub(crate) struct Input {
    buf: Vec<u8>,
    /// Patched offsets and their original bytes.
    patches: Vec<(usize, u8)>,
}

impl Input {
    /// Wraps bytes already read.
    pub(crate) fn from_vec(buf: Vec<u8>) -> Self {
        Input {
            buf,
            patches: Vec::new(),
        }
    }

    /// The bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Overwrites the byte at `offset` (kept for [`Input::restore`]).
    pub(crate) fn patch(&mut self, offset: usize, byte: u8) {
        let old = self.buf[offset];
        self.patches.push((offset, old));
        self.buf[offset] = byte;
    }

    /// Puts back every patched byte (latest patch first).
    pub(crate) fn restore(&mut self) {
        let patches = std::mem::take(&mut self.patches);
        for &(offset, old) in patches.iter().rev() {
            self.buf[offset] = old;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_and_restore() {
        let data: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
        let mut input = Input::from_vec(data.clone());
        input.patch(10, b'[');
        input.patch(10, b']');
        input.patch(20, b'[');
        assert_eq!(input.bytes()[10], b']');
        input.restore();
        assert_eq!(input.bytes(), &data[..]);
    }
}
