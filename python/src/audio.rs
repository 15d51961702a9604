//! `AudioSamples`: a sequence's audio (or a reader's range of it), in TorchCodec's words: `data` (channels,
//! samples) float32 in [-1, 1], `pts_seconds`, `duration_seconds`, `sample_rate`.

use framefeed::AudioClip;
use pyo3::prelude::*;
use pyo3::types::PyByteArray;

/// Samples of audio: `data` is a float32 NumPy array of shape (channels, samples), values in [-1, 1];
/// `pts_seconds` when its first sample plays (on the video's timeline, as the frames' `pts`),
/// `duration_seconds` how long it plays, `sample_rate` samples a second. A video without audio gives empty
/// samples (shape (0, 0), rate 0).
#[pyclass(module = "framefeed", name = "AudioSamples", frozen)]
pub(crate) struct PyAudioSamples {
    pub(crate) clip: AudioClip,
}

#[pymethods]
impl PyAudioSamples {
    /// (channels, samples) float32, a new writable array.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let bytes: Vec<u8> = self
            .clip
            .data()
            .iter()
            .flat_map(|s| s.to_ne_bytes())
            .collect();
        let buffer = PyByteArray::new(py, &bytes);
        let shape = (self.clip.channels() as usize, self.clip.samples());
        py.import("numpy")?
            .call_method1("frombuffer", (buffer, "float32"))?
            .call_method1("reshape", (shape,))
    }

    /// `data` as a NumPy array (a new one each call).
    ///
    /// Returns:
    ///     A float32 array of shape (channels, samples).
    fn numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.data(py)
    }

    /// The DLPack protocol, over a new array of `data`: `torch.from_dlpack(samples)`.
    #[pyo3(signature = (**kwargs))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, pyo3::types::PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.data(py)?.call_method("__dlpack__", (), kwargs)
    }

    /// Where `data` is: the host (`(kDLCPU, 0)`).
    fn __dlpack_device__(&self) -> (i32, i32) {
        (1, 0)
    }

    /// When its first sample plays, in seconds.
    #[getter]
    fn pts_seconds(&self) -> f64 {
        self.clip.pts_seconds()
    }

    /// How long it plays, in seconds.
    #[getter]
    fn duration_seconds(&self) -> f64 {
        self.clip.duration_seconds()
    }

    /// Samples a second (0 without audio).
    #[getter]
    fn sample_rate(&self) -> u32 {
        self.clip.sample_rate()
    }

    /// Channels (0 without audio).
    #[getter]
    fn num_channels(&self) -> u32 {
        self.clip.channels()
    }

    fn __len__(&self) -> usize {
        self.clip.samples()
    }

    fn __repr__(&self) -> String {
        format!(
            "AudioSamples(channels={}, samples={}, sample_rate={}, pts_seconds={:.6}, duration_seconds={:.6})",
            self.clip.channels(),
            self.clip.samples(),
            self.clip.sample_rate(),
            self.clip.pts_seconds(),
            self.clip.duration_seconds()
        )
    }
}
