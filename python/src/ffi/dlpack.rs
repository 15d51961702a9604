//! DLPack export: a tensor view of batch memory in a `PyCapsule`, as the DLPack protocol (`__dlpack__`) hands
//! it to NumPy, PyTorch, JAX or CuPy. The view owns a reference to the batch, released by the consumer through
//! the tensor's deleter (or by the capsule's destructor when no consumer took it), so the batch's pooled buffer
//! returns to the pool only when the last view is gone.
//!
//! Both forms are made: the legacy `DLManagedTensor` (capsule `dltensor`) and DLPack 1.x's
//! `DLManagedTensorVersioned` (capsule `dltensor_versioned`), per the `max_version` the consumer asks for.

use std::ffi::{c_void, CStr};

use pyo3::ffi;
use pyo3::prelude::*;

const LEGACY_NAME: &CStr = c"dltensor";
const VERSIONED_NAME: &CStr = c"dltensor_versioned";
/// The DLPack version of the versioned form.
pub(crate) const VERSION: (u32, u32) = (1, 0);
const FLAG_READ_ONLY: u64 = 1;

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

#[repr(C)]
struct DLManagedTensorVersioned {
    version: [u32; 2],
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

/// DLPack's device types this module exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Device {
    /// `kDLCPU`.
    Cpu,
    /// `kDLCUDA` with the device ordinal.
    Cuda(i32),
}

impl Device {
    /// `(device_type, device_id)`, as `__dlpack_device__` returns it.
    pub(crate) fn pair(self) -> (i32, i32) {
        match self {
            Device::Cpu => (1, 0),
            Device::Cuda(n) => (2, n),
        }
    }
}

/// A tensor to export: where its elements are and what keeps them alive.
pub(crate) struct Export {
    /// Kept until the consumer releases the view (the batch).
    pub(crate) owner: Box<dyn Send + Sync>,
    /// Address of the memory's start (host or device).
    pub(crate) address: usize,
    /// Bytes from `address` to the first element.
    pub(crate) byte_offset: u64,
    /// Dimensions, row-major and compact.
    pub(crate) shape: Vec<i64>,
    /// DLPack type code (0 int, 1 uint, 2 float) and bits.
    pub(crate) dtype: (u8, u8),
    pub(crate) device: Device,
    /// Consumers that read DLPack 1.x flags make read-only arrays.
    pub(crate) read_only: bool,
}

/// What a capsule's tensor points back to, freed by the deleter.
struct Context {
    _owner: Box<dyn Send + Sync>,
    shape: Vec<i64>,
}

fn tensor(export: &Export, shape: *mut i64) -> DLTensor {
    let (device_type, device_id) = export.device.pair();
    DLTensor {
        data: export.address as *mut c_void,
        device: DLDevice {
            device_type,
            device_id,
        },
        ndim: export.shape.len() as i32,
        dtype: DLDataType {
            code: export.dtype.0,
            bits: export.dtype.1,
            lanes: 1,
        },
        shape,
        // Compact row-major.
        strides: std::ptr::null_mut(),
        byte_offset: export.byte_offset,
    }
}

unsafe extern "C" fn delete_legacy(managed: *mut DLManagedTensor) {
    // SAFETY: `managed` was made by `capsule` from a Box, with a Box<Context> as its context; the consumer (or
    // our capsule destructor) calls the deleter exactly once, as the protocol requires.
    unsafe {
        let managed = Box::from_raw(managed);
        drop(Box::from_raw(managed.manager_ctx.cast::<Context>()));
    }
}

unsafe extern "C" fn delete_versioned(managed: *mut DLManagedTensorVersioned) {
    // SAFETY: as in `delete_legacy`, for the versioned struct.
    unsafe {
        let managed = Box::from_raw(managed);
        drop(Box::from_raw(managed.manager_ctx.cast::<Context>()));
    }
}

/// The capsule's destructor: a tensor no consumer took (its capsule still has its first name) is freed here;
/// a consumer renames the capsule to `used_...` when it takes the tensor, and frees it itself.
unsafe extern "C" fn destroy_capsule(capsule: *mut ffi::PyObject) {
    // SAFETY: called by CPython with the GIL held on one of our capsules; PyCapsule_IsValid checks the name
    // before we read its pointer, which `capsule` set to a live managed tensor of the matching kind.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, LEGACY_NAME.as_ptr()) == 1 {
            let managed = ffi::PyCapsule_GetPointer(capsule, LEGACY_NAME.as_ptr());
            delete_legacy(managed.cast());
        } else if ffi::PyCapsule_IsValid(capsule, VERSIONED_NAME.as_ptr()) == 1 {
            let managed = ffi::PyCapsule_GetPointer(capsule, VERSIONED_NAME.as_ptr());
            delete_versioned(managed.cast());
        }
    }
}

/// A DLPack capsule of `export`: the versioned form when `versioned`, else the legacy one.
pub(crate) fn capsule(
    py: Python<'_>,
    export: Export,
    versioned: bool,
) -> PyResult<Bound<'_, PyAny>> {
    let mut context = Box::new(Context {
        shape: export.shape.clone(),
        _owner: export.owner,
    });
    // The shape lives in the context's own Vec: its heap buffer does not move with the Box.
    let shape = context.shape.as_mut_ptr();
    let tensor = tensor(
        &Export {
            owner: Box::new(()),
            ..export
        },
        shape,
    );
    let context = Box::into_raw(context).cast::<c_void>();
    let (pointer, name): (*mut c_void, &CStr) = if versioned {
        let managed = Box::new(DLManagedTensorVersioned {
            version: [VERSION.0, VERSION.1],
            manager_ctx: context,
            deleter: Some(delete_versioned),
            flags: if export.read_only { FLAG_READ_ONLY } else { 0 },
            dl_tensor: tensor,
        });
        (Box::into_raw(managed).cast(), VERSIONED_NAME)
    } else {
        let managed = Box::new(DLManagedTensor {
            dl_tensor: tensor,
            manager_ctx: context,
            deleter: Some(delete_legacy),
        });
        (Box::into_raw(managed).cast(), LEGACY_NAME)
    };
    // SAFETY: `pointer` is a live managed tensor named by `name` (a static string); the destructor frees it
    // unless a consumer renamed the capsule. On failure the capsule does not exist, so we free the tensor.
    unsafe {
        let raw = ffi::PyCapsule_New(pointer, name.as_ptr(), Some(destroy_capsule));
        if raw.is_null() {
            if versioned {
                delete_versioned(pointer.cast());
            } else {
                delete_legacy(pointer.cast());
            }
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, raw))
    }
}
