//! `storage_options=` and `index_cache=`: how the Python API names [`framefeed::RemoteOptions`] (remote videos
//! read by byte ranges: `s3://`, `gs://`, `az://`, `https://`).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};

/// The remote options that `storage_options` (a dict, as fsspec takes it: `key`, `secret`, `token`,
/// `endpoint_url`, `region_name`, `anon`, `client_kwargs={...}`, `account_name`...; plus framefeed's own keys
/// `ca_file`, `request_bytes`, `in_flight`, `memory_bytes`, `timeout` in seconds, `retries`, `seek_mode`) and
/// `index_cache`
/// (a directory) give, validated.
pub(crate) fn remote_options(
    storage_options: Option<&Bound<'_, PyDict>>,
    index_cache: Option<std::path::PathBuf>,
) -> PyResult<framefeed::RemoteOptions> {
    let mut options = framefeed::RemoteOptions::new();
    if let Some(dict) = storage_options {
        for (key, value) in dict.iter() {
            let key: String = key
                .extract()
                .map_err(|_| PyTypeError::new_err("storage_options' keys must be strings"))?;
            options = add(options, &key, &value)?;
        }
    }
    if let Some(dir) = index_cache {
        options = options.index_cache(dir);
    }
    options.validate().map_err(|e| {
        PyValueError::new_err(
            e.to_string()
                .replace("RemoteOptions: ", "storage_options: "),
        )
    })?;
    Ok(options)
}

fn add(
    options: framefeed::RemoteOptions,
    key: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<framefeed::RemoteOptions> {
    let number = |what: &str| -> PyResult<u64> {
        value.extract().map_err(|_| {
            PyTypeError::new_err(format!("storage_options[{what:?}] must be an integer"))
        })
    };
    Ok(match key {
        // fsspec's client arguments (s3fs: endpoint_url, region_name...): the same names, one level down.
        "client_kwargs" | "config_kwargs" => {
            let dict = value.cast::<PyDict>().map_err(|_| {
                PyTypeError::new_err(format!("storage_options[{key:?}] must be a dict"))
            })?;
            let mut options = options;
            for (k, v) in dict.iter() {
                let k: String = k.extract()?;
                options = add(options, &k, &v)?;
            }
            options
        }
        "ca_file" => options.ca_file(value.extract::<std::path::PathBuf>()?),
        "index_cache" => options.index_cache(value.extract::<std::path::PathBuf>()?),
        "seek_mode" => {
            let mode: String = value.extract().map_err(|_| {
                PyTypeError::new_err("storage_options['seek_mode'] must be a string")
            })?;
            options.seek_mode(mode.parse().map_err(|e: framefeed::Error| {
                PyValueError::new_err(e.to_string().replace(
                    "invalid configuration: seek_mode",
                    "storage_options['seek_mode']",
                ))
            })?)
        }
        "request_bytes" => options.request_bytes(number(key)?),
        "in_flight" => options.in_flight(number(key)? as usize),
        "memory_bytes" => options.memory_bytes(number(key)?),
        "retries" => options.retries(number(key)? as usize),
        "timeout" => {
            let seconds: f64 = value.extract()?;
            options.timeout(
                framefeed::seconds_setting("storage_options['timeout']", seconds)
                    .map_err(PyValueError::new_err)?,
            )
        }
        // The store's own options.
        _ => {
            let text = if value.is_instance_of::<PyBool>() {
                if value.extract::<bool>()? {
                    "true"
                } else {
                    "false"
                }
                .to_owned()
            } else {
                value.str()?.to_string()
            };
            options.option(key, text)
        }
    })
}
