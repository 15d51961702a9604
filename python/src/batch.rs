//! `Batch` and `Sequence`: views of a framefeed batch, exported without copying through the DLPack protocol
//! (`numpy()` is `numpy.from_dlpack`). Every export holds the batch; its pooled buffer goes back to the
//! operator's pool when the batch object and the last array viewing it are gone.

use std::sync::Arc;

use framefeed::{Batch, DType, DecodedOn, Layout};
use pyo3::exceptions::{PyBufferError, PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::errors::{label_object, IntoPyResult};
use crate::ffi::dlpack::{self, Device, Export};

/// A batch shared between its Python object, its sequences and the arrays viewing it.
pub(crate) type Shared = Arc<Batch>;

pub(crate) fn dtype_name(dtype: DType) -> &'static str {
    match dtype {
        DType::U8 => "uint8",
        DType::U16 => "uint16",
        DType::F32 | DType::F32Unit => "float32",
        DType::F16 | DType::F16Unit => "float16",
    }
}

fn dlpack_dtype(dtype: DType) -> (u8, u8) {
    match dtype {
        DType::F32 | DType::F32Unit => (2, 32),
        DType::F16 | DType::F16Unit => (2, 16),
        DType::U16 => (1, 16),
        _ => (1, 8),
    }
}

fn layout_name(layout: Layout) -> &'static str {
    match layout {
        Layout::Fchw => "FCHW",
        Layout::Cfhw => "CFHW",
        _ => "FHWC",
    }
}

fn device_of(batch: &Batch) -> Device {
    if batch.is_on_gpu() {
        Device::Cuda(crate::cuda::gpu_ordinal(batch))
    } else {
        Device::Cpu
    }
}

/// The address of a batch's memory: its host buffer, or (with the `cuda` feature) its device buffer, after
/// ordering the consumer's `stream` behind the batch's.
fn address(batch: &Batch, stream: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
    if !batch.is_on_gpu() {
        return Ok(batch.data().as_ptr() as usize);
    }
    crate::cuda::device_address(batch, stream)
}

/// What `__dlpack__` does with its keywords, shared by batches and sequences: `copy=True` or another
/// `dl_device` export a host copy (of a GPU batch: `to_host`), otherwise a view.
fn export(
    py: Python<'_>,
    batch: &Shared,
    range: Option<(usize, Vec<i64>)>,
    stream: Option<&Bound<'_, PyAny>>,
    max_version: Option<(u32, u32)>,
    dl_device: Option<(i32, i32)>,
    copy: Option<bool>,
) -> PyResult<Py<PyAny>> {
    let here = device_of(batch);
    let wants_host = dl_device.is_some_and(|d| d != here.pair());
    if wants_host && (dl_device != Some(Device::Cpu.pair()) || copy == Some(false)) {
        return Err(PyBufferError::new_err(format!(
            "a batch on {here:?} cannot be exported to DLPack device {dl_device:?} without a copy"
        )));
    }
    let batch = if copy == Some(true) || wants_host {
        Arc::new(py.detach(|| batch.to_host()).py_err(py)?)
    } else {
        batch.clone()
    };
    let (byte_offset, shape) = match range {
        Some(range) => range,
        None => (
            0,
            batch
                .shape()
                .ok_or_else(|| {
                    PyBufferError::new_err(
                        "this batch's last sequence is shorter than the others (partial policy): it is not one \
                         array; export batch.sequences[i] one by one, or use last_sequence_policy='pad'",
                    )
                })?
                .iter()
                .map(|&n| n as i64)
                .collect(),
        ),
    };
    // A sequence's first element is given by its address, with no byte offset: recent PyTorch (2.15) refuses a
    // non-zero `byte_offset` (the DLPack standard lets a consumer do so), and every consumer reads this form.
    let address = address(&batch, stream)? + byte_offset;
    let device = device_of(&batch);
    let capsule = dlpack::capsule(
        py,
        Export {
            address,
            byte_offset: 0,
            shape,
            dtype: dlpack_dtype(batch.dtype()),
            device,
            read_only: false,
            owner: Box::new(batch),
        },
        max_version.is_some_and(|(major, _)| major >= dlpack::VERSION.0),
    )?;
    Ok(capsule.unbind())
}

/// [`export`] of a region of `batch`: `(byte offset, shape)` (a reader's frames).
pub(crate) fn export_region(
    py: Python<'_>,
    batch: &Shared,
    region: (usize, Vec<i64>),
    stream: Option<&Bound<'_, PyAny>>,
    max_version: Option<(u32, u32)>,
    dl_device: Option<(i32, i32)>,
    copy: Option<bool>,
) -> PyResult<Py<PyAny>> {
    export(
        py,
        batch,
        Some(region),
        stream,
        max_version,
        dl_device,
        copy,
    )
}

/// The DLPack device of a batch's memory, `(kind, ordinal)`.
pub(crate) fn device_pair(batch: &Batch) -> (i32, i32) {
    device_of(batch).pair()
}

fn numpy_from_dlpack<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    obj.py()
        .import("numpy")?
        .call_method1("from_dlpack", (obj,))
}

/// Up to `batch_size` sequences of frames from one video (or, with `pack=True`, from consecutive videos), in
/// one buffer. `numpy()` (or `np.from_dlpack(batch)`, `torch.from_dlpack(batch)`) views it without copying.
#[pyclass(module = "framefeed", name = "Batch", frozen)]
pub(crate) struct PyBatch {
    pub(crate) inner: Shared,
}

#[pymethods]
impl PyBatch {
    /// The id of the video the batch came from (its first sequence's, in a packed batch).
    #[getter]
    fn video_id(&self) -> u64 {
        self.inner.video_id().0
    }

    /// The label the video was fed with (`str`, `int` or `None`).
    #[getter]
    fn label(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        label_object(py, self.inner.label())
    }

    /// The batch's index within its video: 0, 1, 2... (in packed mode, within the operator).
    #[getter]
    fn index(&self) -> u64 {
        self.inner.index()
    }

    /// Whether this is the video's last batch.
    #[getter]
    fn is_last(&self) -> bool {
        self.inner.is_last()
    }

    /// Seconds from the arrival of the batch's last real frame to the poll that handed it over (for live and
    /// pulled sources, how far behind the source the consumer is); `None` without frames.
    #[getter]
    fn latency(&self) -> Option<f64> {
        self.inner.latency().map(|d| d.as_secs_f64())
    }

    /// For a video pulled by URL whose source dropped and was reopened before this batch's frames:
    /// `{"frames_before", "seconds", "attempts", "reconnects"}`; else `None`.
    #[getter]
    fn gap<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(gap) = self.inner.gap() else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        dict.set_item("frames_before", gap.frames_before)?;
        dict.set_item("seconds", gap.duration.as_secs_f64())?;
        dict.set_item("attempts", gap.attempts)?;
        dict.set_item("reconnects", gap.reconnects)?;
        Ok(Some(dict))
    }

    /// Whether the batch holds sequences of several videos (`pack=True`).
    #[getter]
    fn is_packed(&self) -> bool {
        self.inner.is_packed()
    }

    /// `(N, ...)` per the layout (`(N, F, H, W, 3)` by default), or `None` when the last sequence is a shorter
    /// partial one (the batch is then not one array).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        self.inner.shape().map(|s| PyTuple::new(py, s)).transpose()
    }

    /// `(H, W, 3)` of every frame.
    #[getter]
    fn frame_shape(&self) -> (usize, usize, usize) {
        let [h, w, c] = self.inner.frame_shape();
        (h, w, c)
    }

    /// The element type's NumPy name: `'uint8'`, `'uint16'`, `'float32'` or `'float16'`.
    #[getter]
    fn dtype(&self) -> &'static str {
        dtype_name(self.inner.dtype())
    }

    /// `'FHWC'`, `'FCHW'` or `'CFHW'`: the order of each sequence's dimensions.
    #[getter]
    fn layout(&self) -> &'static str {
        layout_name(self.inner.layout())
    }

    /// Bytes of the batch's data (padding included).
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.byte_len()
    }

    /// Real frames in the batch (padding excluded).
    #[getter]
    fn valid_frames(&self) -> usize {
        self.inner.valid_frames()
    }

    /// `'cpu'`, or `'cuda'` for a batch in GPU memory.
    #[getter]
    fn device(&self) -> &'static str {
        if self.inner.is_on_gpu() {
            "cuda"
        } else {
            "cpu"
        }
    }

    /// Where the frames were decoded: `'cpu'` or `'nvdec'`.
    #[getter]
    fn decoded_on(&self) -> &'static str {
        match self.inner.decoded_on() {
            DecodedOn::Cuda => "nvdec",
            _ => "cpu",
        }
    }

    /// The sequences, in order.
    #[getter]
    fn sequences(&self) -> Vec<PySequence> {
        (0..self.inner.len())
            .map(|index| PySequence {
                batch: self.inner.clone(),
                index,
            })
            .collect()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __getitem__(&self, index: isize) -> PyResult<PySequence> {
        let n = self.inner.len() as isize;
        let i = if index < 0 { index + n } else { index };
        if !(0..n).contains(&i) {
            return Err(PyIndexError::new_err(format!(
                "sequence {index} of a batch of {n}"
            )));
        }
        Ok(PySequence {
            batch: self.inner.clone(),
            index: i as usize,
        })
    }

    /// The whole batch as one NumPy array, viewing the batch's buffer without copying.
    ///
    /// Returns:
    ///     An array of shape ``shape`` (``(N, F, H, W, 3)`` by default).
    ///
    /// Raises:
    ///     ValueError: A ragged batch (its last sequence shorter, ``last_sequence_policy="partial"``: use
    ///         ``sequences[i].numpy()``), or a batch in GPU memory (``to_host()`` first, or export it to CuPy or
    ///         PyTorch with DLPack).
    fn numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let batch = &slf.get().inner;
        if batch.is_on_gpu() {
            return Err(PyValueError::new_err(
                "this batch is in GPU memory: use cupy.from_dlpack(batch) or torch.from_dlpack(batch), or batch.to_host().numpy()",
            ));
        }
        if batch.shape().is_none() {
            return Err(PyValueError::new_err(
                "this batch's last sequence is shorter than the others (partial policy), so the batch is not one \
                 array: use batch.sequences[i].numpy(), or last_sequence_policy='pad'",
            ));
        }
        numpy_from_dlpack(slf.as_any())
    }

    /// A copy of the batch in host memory (of a GPU batch: waits for the GPU to finish writing it).
    ///
    /// Returns:
    ///     The host :class:`Batch`.
    fn to_host(&self, py: Python<'_>) -> PyResult<PyBatch> {
        let batch = py.detach(|| self.inner.to_host()).py_err(py)?;
        Ok(PyBatch {
            inner: Arc::new(batch),
        })
    }

    /// The DLPack protocol: a capsule viewing the batch (see `numpy`). `stream` orders a CUDA consumer's stream
    /// after the batch's; `max_version >= (1, 0)` gets a versioned capsule; `dl_device=(1, 0)` or `copy=True`
    /// exports a host copy.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        export(py, &self.inner, None, stream, max_version, dl_device, copy)
    }

    /// `(1, 0)` for a host batch, `(2, ordinal)` for a GPU batch.
    fn __dlpack_device__(&self) -> (i32, i32) {
        device_of(&self.inner).pair()
    }

    fn __repr__(&self) -> String {
        format!(
            "<framefeed.Batch video {} index {} sequences {} frames {} shape {:?} {}>",
            self.inner.video_id().0,
            self.inner.index(),
            self.inner.len(),
            self.inner.valid_frames(),
            self.inner.shape(),
            dtype_name(self.inner.dtype())
        )
    }
}

/// One sequence of a batch: `sequence_length` frames (a partial last one has fewer; a padded one counts its
/// real frames in `valid_frames`).
#[pyclass(module = "framefeed", name = "Sequence", frozen)]
pub(crate) struct PySequence {
    pub(crate) batch: Shared,
    pub(crate) index: usize,
}

#[pymethods]
impl PySequence {
    /// `(F, H, W, 3)` per the layout; F counts padding frames.
    #[getter]
    fn shape(&self) -> (usize, usize, usize, usize) {
        let [a, b, c, d] = self.batch.sequence(self.index).shape();
        (a, b, c, d)
    }

    /// How many frames are real; the rest, at the end, are zeros.
    #[getter]
    fn valid_frames(&self) -> usize {
        self.batch.sequence(self.index).valid_frames()
    }

    /// How many zero frames pad the sequence.
    #[getter]
    fn padded_frames(&self) -> usize {
        self.batch.sequence(self.index).padded_frames()
    }

    /// Index in its video of the first frame.
    #[getter]
    fn first_frame(&self) -> u64 {
        self.batch.sequence(self.index).first_frame()
    }

    /// Display index of each real frame (0-based, the video's display order): consecutive unless sampling
    /// chose them or a hole lies between (see `holes`).
    #[getter]
    fn indices(&self) -> Vec<u64> {
        self.batch.sequence(self.index).indices().to_vec()
    }

    /// Presentation time in seconds of each real frame.
    #[getter]
    fn pts(&self) -> Vec<f64> {
        self.batch.sequence(self.index).pts().to_vec()
    }

    /// The audio played while its frames are shown (`AudioSamples`), with `audio=True`: empty for a video
    /// without audio; `None` without `audio=True`, and for sampled clips of a live video.
    #[getter]
    fn audio(&self) -> Option<crate::audio::PyAudioSamples> {
        self.batch
            .sequence(self.index)
            .audio()
            .map(|clip| crate::audio::PyAudioSamples { clip: clip.clone() })
    }

    /// Whether each real frame is damaged: concealed by the decoder, or decoded from damaged data. A frame not
    /// damaged is the same picture whichever API decodes it, and the `ffmpeg` CLI's at its time.
    #[getter]
    fn damaged(&self) -> Vec<bool> {
        self.batch.sequence(self.index).damaged().to_vec()
    }

    /// The holes met since the video's previous sequence, as `(display index, seconds)`: indices whose pictures
    /// do not decode (the frames after keep their indices). On a video's last sequence, those after its last
    /// frame too.
    #[getter]
    fn holes(&self) -> Vec<(u64, f64)> {
        self.batch
            .sequence(self.index)
            .holes()
            .iter()
            .map(|h| (h.index, h.pts))
            .collect()
    }

    /// On a video's last sequence: why reading stopped before the end of its data (a file cut short), if it did.
    #[getter]
    fn ended_early(&self) -> Option<String> {
        self.batch
            .sequence(self.index)
            .ended_early()
            .map(str::to_owned)
    }

    /// When each real frame arrived, in seconds since the Unix epoch (the read of the packet whose decoding
    /// gave it).
    #[getter]
    fn arrivals(&self) -> Vec<f64> {
        self.batch
            .sequence(self.index)
            .arrivals()
            .iter()
            .map(|t| {
                t.duration_since(std::time::UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64())
            })
            .collect()
    }

    /// `(x, y, width, height)` of the crop window (in the resized frame's pixels), or `None` without a crop.
    #[getter]
    fn crop_window(&self) -> Option<(i64, i64, usize, usize)> {
        self.batch
            .sequence(self.index)
            .crop_window()
            .map(|w| (w.x, w.y, w.width, w.height))
    }

    /// How the frames were turned by the video's display matrix before the resize and crop: `"none"`,
    /// `"rotate90"` (a quarter clockwise), `"rotate180"`, `"rotate270"`, `"hflip"`, `"vflip"`, `"transpose"` or
    /// `"transverse"` (`"none"` with `autorotate=False`).
    #[getter]
    fn orientation(&self) -> &'static str {
        self.batch.sequence(self.index).orientation().as_str()
    }

    /// The video's colour (`types.ColorInfo`): bit depth, primaries, transfer, matrix, range, dynamic range
    /// (`"sdr"`, `"pq"`, `"hlg"`) and HDR static metadata, as its stream gives them.
    #[getter]
    fn color<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        crate::colour::color_dict(py, self.batch.sequence(self.index).color())
    }

    /// `(width, height)` frames were resized to before the crop, or `None` without a resize.
    #[getter]
    fn resized(&self) -> Option<(usize, usize)> {
        self.batch.sequence(self.index).resized()
    }

    /// The id of the video the sequence comes from.
    #[getter]
    fn video_id(&self) -> u64 {
        self.batch.sequence(self.index).video().id.0
    }

    /// The label of the video the sequence comes from.
    #[getter]
    fn label(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        label_object(py, self.batch.sequence(self.index).video().label.as_ref())
    }

    /// Whether this is its video's last sequence.
    #[getter]
    fn ends_video(&self) -> bool {
        self.batch.sequence(self.index).ends_video()
    }

    /// The sequence as a NumPy array viewing the batch's buffer (no copy).
    ///
    /// Returns:
    ///     An array of shape ``shape``.
    ///
    /// Raises:
    ///     ValueError: A sequence in GPU memory (export it with DLPack instead).
    fn numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        if slf.get().batch.is_on_gpu() {
            return Err(PyValueError::new_err(
                "this sequence is in GPU memory: export it with DLPack (cupy, torch), or take batch.to_host()",
            ));
        }
        numpy_from_dlpack(slf.as_any())
    }

    /// The DLPack protocol, for this sequence's region of the batch.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let seq = self.batch.sequence(self.index);
        let shape = seq.shape().iter().map(|&n| n as i64).collect();
        let range = Some((seq.byte_offset(), shape));
        export(py, &self.batch, range, stream, max_version, dl_device, copy)
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        device_of(&self.batch).pair()
    }

    fn __repr__(&self) -> String {
        let seq = self.batch.sequence(self.index);
        format!(
            "<framefeed.Sequence video {} first frame {} shape {:?} valid {}>",
            seq.video().id.0,
            seq.first_frame(),
            seq.shape(),
            seq.valid_frames()
        )
    }
}
