//! A stream's colour (`framefeed::ColorInfo`) as the dicts `probe()` and `VideoReader.metadata.color` give.

use framefeed::{ColorInfo, ContentLight, MasteringDisplay};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `{"bit_depth", "primaries", "transfer", "matrix", "range", "dynamic_range", "mastering_display",
/// "content_light"}` (`types.ColorInfo`).
pub(crate) fn color_dict<'py>(py: Python<'py>, c: &ColorInfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("bit_depth", c.bit_depth)?;
    d.set_item("primaries", &c.primaries)?;
    d.set_item("transfer", &c.transfer)?;
    d.set_item("matrix", &c.matrix)?;
    d.set_item("range", &c.range)?;
    d.set_item("dynamic_range", c.dynamic_range().as_str())?;
    d.set_item(
        "mastering_display",
        mastering_dict(py, c.mastering_display.as_ref())?,
    )?;
    d.set_item("content_light", content_light_dict(py, c.content_light)?)?;
    Ok(d)
}

/// `{"primaries": [(x, y)] * 3 (red, green, blue), "white_point": (x, y), "min_luminance", "max_luminance"}`
/// (`types.MasteringDisplay`), or `None`.
pub(crate) fn mastering_dict<'py>(
    py: Python<'py>,
    m: Option<&MasteringDisplay>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(m) = m else { return Ok(None) };
    let d = PyDict::new(py);
    d.set_item("primaries", m.primaries.map(|p| p.to_vec()))?;
    d.set_item("white_point", m.white_point)?;
    d.set_item("min_luminance", m.min_luminance)?;
    d.set_item("max_luminance", m.max_luminance)?;
    Ok(Some(d))
}

/// `{"max_cll", "max_fall"}` (`types.ContentLight`), or `None`.
pub(crate) fn content_light_dict(
    py: Python<'_>,
    c: Option<ContentLight>,
) -> PyResult<Option<Bound<'_, PyDict>>> {
    let Some(c) = c else { return Ok(None) };
    let d = PyDict::new(py);
    d.set_item("max_cll", c.max_cll)?;
    d.set_item("max_fall", c.max_fall)?;
    Ok(Some(d))
}
