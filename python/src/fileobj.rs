//! Python file objects as video sources, read lazily: the demuxer's reads at offsets become `seek` and `read`
//! calls on the object (fsspec's, s3fs', gcsfs', smart_open's, `io.BytesIO`), the GIL taken only inside each
//! call; a file object over a file on disk (`open()`, a temporary file) is read from its file directly, at
//! offsets, so the object's own position (shared with a forked child) is never moved.

use std::io;

use parking_lot::Mutex;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// A seekable binary file object read at offsets (`seek` then `read`), one read at a time.
#[derive(Debug)]
pub(crate) struct PyFileReader {
    /// Held while a read's `seek` and `read` run, so that two reads never interleave on the object.
    file: Mutex<Py<PyAny>>,
}

impl framefeed::ReadAt for PyFileReader {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let file = self.file.lock();
        crate::exiting::attach(|py| -> PyResult<usize> {
            let file = file.bind(py);
            file.call_method1("seek", (offset,))?;
            let data = file.call_method1("read", (buf.len(),))?;
            let bytes = data.cast::<PyBytes>().map_err(|_| {
                PyTypeError::new_err(
                    "the file object's read() gave no bytes (open it in binary mode)",
                )
            })?;
            let bytes = bytes.as_bytes();
            let n = bytes.len().min(buf.len());
            buf[..n].copy_from_slice(&bytes[..n]);
            Ok(n)
        })
        .unwrap_or_else(|| {
            Err(pyo3::exceptions::PyRuntimeError::new_err(
                "the interpreter is exiting",
            ))
        })
        .map_err(|e| {
            io::Error::other(format!(
                "the file object's read at byte {offset} failed: {e}"
            ))
        })
    }
}

/// How a file object is read: `Ok(Some(video))` lazily (from its file on disk, or through `seek`/`read`, a
/// Matroska video's frames numbered per `seek_mode`), `Ok(None)` when it cannot seek (the caller reads it through
/// once).
pub(crate) fn lazy(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    seek_mode: framefeed::SeekMode,
) -> PyResult<Option<framefeed::Encoded>> {
    if file.is_instance(&py.import("io")?.getattr("TextIOBase")?)? {
        return Err(PyTypeError::new_err(
            "the file object is in text mode: open it in binary mode ('rb')",
        ));
    }
    if let Some(video) = on_disk(file) {
        return Ok(Some(video));
    }
    let seekable = file.hasattr("seekable")?
        && file.call_method0("seekable")?.is_truthy()?
        && file.hasattr("seek")?;
    if !seekable {
        return Ok(None);
    }
    let start: u64 = file.call_method0("tell")?.extract().unwrap_or(0);
    let len: u64 = file.call_method1("seek", (0, 2))?.extract()?;
    file.call_method1("seek", (start,))?;
    let reader = PyFileReader {
        file: Mutex::new(file.clone().unbind()),
    };
    Ok(Some(framefeed::Encoded::reader_with_seek_mode(
        reader, len, seek_mode,
    )))
}

/// The file on disk a file object reads, opened anew (its own offset), when it is a regular file.
fn on_disk(file: &Bound<'_, PyAny>) -> Option<framefeed::Encoded> {
    let fd: i32 = file.call_method0("fileno").ok()?.extract().ok()?;
    framefeed::Encoded::file(format!("/proc/self/fd/{fd}")).ok()
}
