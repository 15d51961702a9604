//! A read-only Python buffer borrowed by address, as a [`Bytes`] that keeps its exporter alive.
//!
//! CPython's buffer protocol is in the stable ABI only from 3.11, and this module is built for 3.9+, so the
//! Python side (`framefeed/_buffers.py`) hands over a read-only, C-contiguous NumPy view of the buffer with its
//! address and length; the view holds the exporter, and the `Bytes` holds the view.

use bytes::Bytes;
use pyo3::prelude::*;

/// A Python object exporting `len` read-only bytes at `address`.
struct Borrowed {
    /// Keeps the exporter (and so the memory) alive. Dropped without the GIL, PyO3 defers the decref.
    _owner: Py<PyAny>,
    address: usize,
    len: usize,
}

impl AsRef<[u8]> for Borrowed {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `address` and `len` describe the C-contiguous data of a read-only NumPy array (checked by
        // `_buffers.readonly_view` and in `borrow` below), which `_owner` keeps alive for as long as this value
        // exists; read-only exports are not written to by their producers while exported.
        unsafe { std::slice::from_raw_parts(self.address as *const u8, self.len) }
    }
}

/// The bytes of a read-only, C-contiguous buffer `view` (a NumPy array) at `address`, without copying.
pub(crate) fn borrow(view: Py<PyAny>, address: usize, len: usize) -> PyResult<Bytes> {
    if address == 0 && len != 0 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "a buffer with no address",
        ));
    }
    Ok(Bytes::from_owner(Borrowed {
        _owner: view,
        address,
        len,
    }))
}
